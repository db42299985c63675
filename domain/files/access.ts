/**
 * Access rules of the files capability: which files and versions an actor may see, and which it may change.
 * Other capabilities (reports, rules, comparisons, comments, MCP, GraphQL) go through `visibleFiles` too.
 */
import type { Knex } from 'knex';
import { ForbiddenError, NotFoundError } from '../../common/errors';
import { File, FileVersion, type PlanName, type Role } from '../../db/models';

/** Who acts: the part of the API's principal (api/context.ts) the files domain reads. */
export interface FileActor {
  companyId: string;
  personId: string;
  role: Role;
  apiKeyId?: string | null;
  /** the company's plan, read afresh for this request (uploads need one) */
  companyPlan?: PlanName | null;
}

/** Where a query runs: the unit of work's transaction, or the connection pool for a read. */
export type Db = Knex | Knex.Transaction;

/**
 * Who sees a file — the one rule every files query goes through (lists, versions, previews, download
 * links, reports): files of the actor's company that are visible to the whole company, that the actor
 * uploaded, or any file of the company when the actor is an admin. An API key sees what its owner sees.
 * Anything else is "not found".
 */
export function visibleFiles(actor: FileActor, db?: Db) {
  const query = File.scoped(actor.companyId, db);
  if (actor.role !== 'admin') {
    void query.where((q) =>
      q.where('files.visibility', 'company').orWhere('files.uploadedByPersonId', actor.personId),
    );
  }
  return query;
}

/** A file the actor may see (404 otherwise); `forUpdate` locks it for the unit of work. */
export async function visibleFile(
  actor: FileActor,
  db: Db,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<File> {
  const query = visibleFiles(actor, db).findById(id);
  const file = await (options.forUpdate ? query.forUpdate() : query);
  if (!file) throw new NotFoundError('file not found');
  return file;
}

/** A version of a file the actor may see, in one query (the file's visibility rule stays visibleFiles). */
export async function visibleVersion(
  actor: FileActor,
  db: Db,
  fileId: string,
  version: number,
): Promise<FileVersion> {
  const row = await FileVersion.scoped(actor.companyId, db)
    .findOne({ 'fileVersions.fileId': fileId, 'fileVersions.version': version })
    .whereExists(visibleFiles(actor, db).select(1).whereColumn('files.id', 'fileVersions.fileId'));
  if (!row) throw new NotFoundError('file version not found');
  return row;
}

/**
 * The file to change or delete, locked for the transaction: 404 when the actor does not see it, 403 when
 * the actor sees it but is neither its uploader nor an admin.
 */
export async function fileToManage(actor: FileActor, trx: Db, id: string): Promise<File> {
  const file = await visibleFile(actor, trx, id, { forUpdate: true });
  if (actor.role !== 'admin' && file.uploadedByPersonId !== actor.personId) {
    throw new ForbiddenError('only the person who uploaded the file or an admin may change or delete it');
  }
  return file;
}
