/**
 * Comparison fixtures as rows only (no upload, so no workflow runs for them and only the test changes their
 * states): a company file with two or more CSV versions, their objects stored in MinIO, each version's report
 * row, and a requested comparison of the first two versions.
 */
import { randomUUID } from 'node:crypto';
import { seedComparisonRow, seedVersions } from '../../bench/lib';
import { actingStatement } from '../../db/unitOfWork';
import { runComparison } from '../../domain/comparisons/run';
import { runBuild } from '../../domain/reports/build';
import { testEnv } from '../helpers/env';
import type { Team } from '../helpers/factories';

export interface SeededComparison {
  companyId: string;
  fileId: string;
  versionIds: string[];
  comparisonId: string;
  /** runs the comparison as the worker does (the application role, acting for the company) */
  run: (
    storage?: ReturnType<typeof testEnv>['storage'],
    config?: ReturnType<typeof testEnv>['config'],
  ) => ReturnType<typeof runComparison>;
}

/**
 * `texts[i]` is version i + 1's CSV (or workbook, with `format: 'xlsx'`). `reports`: `none` (no report row),
 * a status for every version's row, or `built` (built here by the reports engine, so the comparison takes
 * their types).
 */
export async function seedComparison(
  team: Team,
  texts: Array<string | Buffer>,
  options: {
    reports?: 'none' | 'built' | 'queued' | 'building' | 'ready' | 'failed';
    keyColumns?: string[];
    format?: 'csv' | 'xlsx';
  } = {},
): Promise<SeededComparison> {
  const { knex, appKnex, storage, config } = testEnv();
  const companyId = team.company.id;
  const reports = options.reports ?? 'none';
  const { fileId, versionIds } = await seedVersions(
    { knex, storage },
    { companyId, personId: team.admin.id },
    options.format ?? 'csv',
    texts.map((text) => Buffer.from(text)),
    texts.map((text) => Buffer.byteLength(text)),
    { visibility: 'company' },
  );
  for (const [i, id] of versionIds.entries()) {
    if (reports === 'none') continue;
    await knex('reports').insert({
      id: randomUUID(),
      companyId,
      fileId,
      fileVersionId: id,
      version: i + 1,
      status: reports === 'built' ? 'queued' : reports,
      build: 1,
    });
    if (reports === 'built') {
      await actingStatement({ companyId }, () =>
        runBuild(
          { knex: appKnex, storage, config },
          { companyId, fileId, fileVersionId: id, version: i + 1, build: 1 },
        ),
      );
    }
  }
  const comparisonId = await seedComparisonRow(
    knex,
    companyId,
    fileId,
    versionIds,
    options.keyColumns ?? null,
  );
  const run = (withStorage = storage, withConfig = config) =>
    actingStatement({ companyId }, () =>
      runComparison({ knex: appKnex, storage: withStorage, config: withConfig }, { companyId, comparisonId }),
    );
  return { companyId, fileId, versionIds, comparisonId, run };
}
