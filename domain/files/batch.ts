/**
 * Batched reads of files and versions for adapters that resolve many at once (GraphQL's DataLoaders): each
 * goes through `visibleFiles` (access.ts), the one rule of who sees which file, so a batch never returns a
 * row a single read would refuse.
 */
import { raw } from 'objection';
import { File, FileVersion } from '../../db/models';
import { visibleFiles, type Db, type FileActor } from './access';

/** A keyset position: created_at with microseconds (ISO 8601 UTC text) and id. */
export interface KeysetPosition {
  t: string;
  i: string;
}

/** A row with its keyset position (`cursorAt`), newest first by (created_at, id). */
export type Positioned<T> = T & { cursorAt: string };

const POSITION = `to_char(?? at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The files of `ids` the actor may see (missing ones and other people's private files are left out). */
export function visibleFilesByIds(actor: FileActor, db: Db, ids: readonly string[]): Promise<File[]> {
  return visibleFiles(actor, db).whereIn('files.id', [...ids]) as unknown as Promise<File[]>;
}

/** A page of the files the actor may see, newest first, after `after` (`limit` + 1 rows: the extra one says more exist). */
export function visibleFilesPage(
  actor: FileActor,
  db: Db,
  page: { limit: number; after?: KeysetPosition },
): Promise<Array<Positioned<File>>> {
  const q = visibleFiles(actor, db).select('files.*', raw(`${POSITION} as cursor_at`, ['files.createdAt']));
  if (page.after)
    void q.whereRaw('(files.created_at, files.id) < (?::timestamptz, ?)', [page.after.t, page.after.i]);
  return q
    .orderBy([
      { column: 'files.createdAt', order: 'desc' },
      { column: 'files.id', order: 'desc' },
    ])
    .limit(page.limit + 1) as unknown as Promise<Array<Positioned<File>>>;
}

/**
 * For each file of `fileIds` the actor may see, a page of its versions, newest first, after `after`: one
 * query for all of them (a window per file), `limit` + 1 rows per file at most.
 */
export async function versionsOfFiles(
  actor: FileActor,
  db: Db,
  fileIds: readonly string[],
  page: { limit: number; after?: KeysetPosition },
): Promise<Map<string, Array<Positioned<FileVersion>>>> {
  const inner = FileVersion.scoped(actor.companyId, db)
    .whereIn('fileVersions.fileId', [...fileIds])
    .whereExists(visibleFiles(actor, db).select(1).whereColumn('files.id', 'fileVersions.fileId'))
    .select(
      'fileVersions.*',
      raw(`${POSITION} as cursor_at`, ['fileVersions.createdAt']),
      raw(
        'row_number() over (partition by file_versions.file_id order by file_versions.created_at desc, file_versions.id desc) as rn',
      ),
    );
  if (page.after)
    void inner.whereRaw('(file_versions.created_at, file_versions.id) < (?::timestamptz, ?)', [
      page.after.t,
      page.after.i,
    ]);
  const rows = (await FileVersion.query(db)
    .from(inner.as('v'))
    .select('v.*')
    .where('v.rn', '<=', page.limit + 1)
    .orderBy([
      { column: 'v.fileId', order: 'asc' },
      { column: 'v.rn', order: 'asc' },
    ])) as unknown as Array<Positioned<FileVersion> & { rn?: unknown }>;
  const byFile = new Map<string, Array<Positioned<FileVersion>>>(fileIds.map((id) => [id, []]));
  for (const row of rows) {
    delete row.rn;
    byFile.get(row.fileId)?.push(row);
  }
  return byFile;
}

/** The versions of `ids` whose file the actor may see. */
export function visibleVersionsByIds(
  actor: FileActor,
  db: Db,
  ids: readonly string[],
): Promise<FileVersion[]> {
  return FileVersion.scoped(actor.companyId, db)
    .whereIn('fileVersions.id', [...ids])
    .whereExists(
      visibleFiles(actor, db).select(1).whereColumn('files.id', 'fileVersions.fileId'),
    ) as unknown as Promise<FileVersion[]>;
}

/** The versions named by (file, number) whose file the actor may see. */
export function visibleVersionsByNumber(
  actor: FileActor,
  db: Db,
  refs: ReadonlyArray<{ fileId: string; version: number }>,
): Promise<FileVersion[]> {
  return FileVersion.scoped(actor.companyId, db)
    .whereIn(
      ['fileVersions.fileId', 'fileVersions.version'],
      // objection's types know single-column lists only
      refs.map((r) => [r.fileId, r.version]) as unknown as string[],
    )
    .whereExists(
      visibleFiles(actor, db).select(1).whereColumn('files.id', 'fileVersions.fileId'),
    ) as unknown as Promise<FileVersion[]>;
}
