/**
 * The context of one GraphQL request: the caller (the request's principal), the database and storage, the
 * cursor sealer, and the request's DataLoaders. Loaders live only as long as the request (nothing is
 * cached across requests: every request reads rows afresh), and every one calls a domain function that
 * applies the same tenant scope and visibility rule as REST.
 */
import DataLoader from 'dataloader';
import type { Knex } from 'knex';
import type { Storage } from '../../common/storage';
import type { Logger } from '../../common/logger';
import type { Comparison, File, FileVersion, Person, Report, SensitiveFinding } from '../../db/models';
import {
  versionsOfFiles,
  visibleFilesByIds,
  visibleVersionsByIds,
  visibleVersionsByNumber,
  type KeysetPosition,
  type Positioned,
} from '../../domain/files/batch';
import { reportResult, reportsOfVersions } from '../../domain/reports/batch';
import type { ReportResult } from '../../domain/reports/present';
import { findingsOfVersions } from '../../domain/sensitive/batch';
import { automaticComparisonsOfVersions, visibleComparisonsByIds } from '../../domain/comparisons/batch';
import { peopleByIds } from '../../domain/identity/directory';
import { Cursors } from '../lists';
import type { Principal } from '../context';

export interface GraphQLContext extends Record<PropertyKey, unknown> {
  actor: Principal;
  db: Knex;
  storage: Storage;
  cursors: Cursors;
  log: Logger;
  correlationId: string;
  /** the request's loader named `name`, made on first use (capabilities add their own the same way) */
  loader<K, V, C = K>(name: string, make: () => DataLoader<K, V, C>): DataLoader<K, V, C>;
}

const cursorsBySecret = new Map<string, Cursors>();

export function graphqlContext(input: {
  actor: Principal;
  db: Knex;
  storage: Storage;
  secretKey: string;
  log: Logger;
  correlationId: string;
}): GraphQLContext {
  let cursors = cursorsBySecret.get(input.secretKey);
  if (!cursors) cursorsBySecret.set(input.secretKey, (cursors = new Cursors(input.secretKey)));
  const loaders = new Map<string, unknown>();
  return {
    ...input,
    cursors,
    loader<K, V, C = K>(name: string, make: () => DataLoader<K, V, C>) {
      let l = loaders.get(name) as DataLoader<K, V, C> | undefined;
      if (!l) loaders.set(name, (l = make()));
      return l;
    },
  };
}

/** Rows found by key, in the order DataLoader asked for them; null where none (not found or not visible). */
function byKey<K, R>(keys: readonly K[], rows: readonly R[], keyOf: (row: R) => K): Array<R | null> {
  const map = new Map<K, R>();
  for (const row of rows) map.set(keyOf(row), row);
  return keys.map((k) => map.get(k) ?? null);
}

export const loaders = {
  file: (c: GraphQLContext) =>
    c.loader(
      'file',
      () =>
        new DataLoader<string, File | null>(async (ids) =>
          byKey(ids, await visibleFilesByIds(c.actor, c.db, ids), (f) => f.id),
        ),
    ),
  version: (c: GraphQLContext) =>
    c.loader(
      'version',
      () =>
        new DataLoader<string, FileVersion | null>(async (ids) =>
          byKey(ids, await visibleVersionsByIds(c.actor, c.db, ids), (v) => v.id),
        ),
    ),
  versionByNumber: (c: GraphQLContext) =>
    c.loader(
      'versionByNumber',
      () =>
        new DataLoader<{ fileId: string; version: number }, FileVersion | null, string>(
          async (refs) => {
            const rows = await visibleVersionsByNumber(c.actor, c.db, refs);
            const map = new Map(rows.map((v) => [`${v.fileId}:${v.version}`, v]));
            return refs.map((r) => map.get(`${r.fileId}:${r.version}`) ?? null);
          },
          { cacheKeyFn: (r) => `${r.fileId}:${r.version}` },
        ),
    ),
  /** a page of versions per file, for one page size and position (all files of a list in one query) */
  versionsPage: (c: GraphQLContext, limit: number, after: KeysetPosition | undefined) =>
    c.loader(
      `versionsPage:${limit}:${after ? `${after.t}/${after.i}` : ''}`,
      () =>
        new DataLoader<string, Array<Positioned<FileVersion>>>(async (fileIds) => {
          const pages = await versionsOfFiles(c.actor, c.db, fileIds, { limit, after });
          const byId = loaders.version(c);
          for (const rows of pages.values()) for (const v of rows) byId.prime(v.id, v);
          return fileIds.map((id) => pages.get(id) ?? []);
        }),
    ),
  report: (c: GraphQLContext) =>
    c.loader(
      'report',
      () =>
        new DataLoader<string, Report | null>(async (versionIds) =>
          byKey(versionIds, await reportsOfVersions(c.actor, c.db, versionIds), (r) => r.fileVersionId),
        ),
    ),
  reportResult: (c: GraphQLContext) =>
    c.loader(
      'reportResult',
      () =>
        new DataLoader<Report, ReportResult | null, string>(
          (reports) => Promise.all(reports.map((r) => reportResult(c.storage, r))),
          { cacheKeyFn: (r) => `${r.id}:${r.build}` },
        ),
    ),
  finding: (c: GraphQLContext) =>
    c.loader(
      'finding',
      () =>
        new DataLoader<string, SensitiveFinding | null>(async (versionIds) =>
          byKey(versionIds, await findingsOfVersions(c.actor, c.db, versionIds), (f) => f.fileVersionId),
        ),
    ),
  comparison: (c: GraphQLContext) =>
    c.loader(
      'comparison',
      () =>
        new DataLoader<string, Comparison | null>(async (ids) =>
          byKey(ids, await visibleComparisonsByIds(c.actor, c.db, ids), (x) => x.id),
        ),
    ),
  automaticComparison: (c: GraphQLContext) =>
    c.loader(
      'automaticComparison',
      () =>
        new DataLoader<string, Comparison | null>(async (versionIds) =>
          byKey(
            versionIds,
            await automaticComparisonsOfVersions(c.actor, c.db, versionIds),
            (x) => x.targetVersionId,
          ),
        ),
    ),
  person: (c: GraphQLContext) =>
    c.loader(
      'person',
      () =>
        new DataLoader<string, Person | null>(async (ids) =>
          byKey(ids, await peopleByIds(c.actor, c.db, ids), (p) => p.id),
        ),
    ),
};
