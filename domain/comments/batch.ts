/**
 * Batched reads of comments for adapters that resolve many files at once (GraphQL's DataLoaders): through
 * `visibleComments` (access.ts), so a batch never returns a comment of a file the actor cannot see — a file
 * of `fileIds` the actor may not see simply has no comments here, as a single read answers 404.
 */
import { raw } from 'objection';
import { Comment } from '../../db/models';
import type { Db, FileActor } from '../files/access';
import type { KeysetPosition, Positioned } from '../files/batch';
import { visibleComments } from './access';

const POSITION = `to_char(?? at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * For each file of `fileIds` the actor may see, a page of its comments, oldest first (as GET
 * /files/{id}/comments), after `after`: one query for all of them (a window per file), `limit` + 1 rows per
 * file at most (the extra one says more exist).
 */
export async function commentsOfFiles(
  actor: FileActor,
  db: Db,
  fileIds: readonly string[],
  page: { limit: number; after?: KeysetPosition },
): Promise<Map<string, Array<Positioned<Comment>>>> {
  const inner = visibleComments(actor, db)
    .whereIn('comments.fileId', [...fileIds])
    .select(
      'comments.*',
      raw(`${POSITION} as cursor_at`, ['comments.createdAt']),
      raw(
        'row_number() over (partition by comments.file_id order by comments.created_at asc, comments.id asc) as rn',
      ),
    );
  if (page.after)
    void inner.whereRaw('(comments.created_at, comments.id) > (?::timestamptz, ?)', [
      page.after.t,
      page.after.i,
    ]);
  const rows = (await Comment.query(db)
    .from(inner.as('c'))
    .select('c.*')
    .where('c.rn', '<=', page.limit + 1)
    .orderBy([
      { column: 'c.fileId', order: 'asc' },
      { column: 'c.rn', order: 'asc' },
    ])) as unknown as Array<Positioned<Comment> & { rn?: unknown }>;
  const byFile = new Map<string, Array<Positioned<Comment>>>(fileIds.map((id) => [id, []]));
  for (const row of rows) {
    delete row.rn;
    byFile.get(row.fileId)?.push(row);
  }
  return byFile;
}
