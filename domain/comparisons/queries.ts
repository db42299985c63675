import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { FileActor } from '../files/access';
import { ConflictError, NotFoundError } from '../../common/errors';
import { Comparison, ComparisonChange } from '../../db/models';
import { visibleComparison, visibleVersion } from './access';
import { visibleFiles } from '../files/access';
import { presentChange, presentComparison, type ChangeRow, type ComparisonView } from './present';

/** GET /comparisons/{id}: status, progress, failure reason, and the summary when ready. */
export async function getComparison(knex: Knex, auth: FileActor, id: string): Promise<ComparisonView> {
  return presentComparison(await visibleComparison(auth, knex, id));
}

/**
 * GET /files/{id}/versions/{version}/comparison: the automatic comparison of the version with its
 * predecessor; 404 for version 1 (nothing to compare with). Before the worker has picked it up, a queued
 * view without an id.
 */
export async function getAutomaticComparison(
  knex: Knex,
  auth: FileActor,
  fileId: string,
  version: number,
): Promise<ComparisonView> {
  const target = await visibleVersion(auth, knex, fileId, version);
  if (target.version === 1) throw new NotFoundError('version 1 has no previous version to be compared with');
  const row = await Comparison.scoped(auth.companyId, knex).findOne({
    targetVersionId: target.id,
    automatic: true,
  });
  if (row) return presentComparison(row);
  return {
    id: null as unknown as string,
    fileId,
    base: { fileId, version: version - 1 },
    target: { fileId, version },
    automatic: true,
    keyColumns: null,
    status: 'queued',
    progress: null,
    failureReason: null,
    failureMessage: null,
    queuedAt: new Date(target.createdAt).toISOString(),
    startedAt: null,
    finishedAt: null,
    result: null,
  };
}

/** GET /comparisons/{id}/changes: a page of row changes in the engine's order (sheet, then row); 409 until ready. */
export async function listChanges(
  knex: Knex,
  auth: FileActor,
  id: string,
  input: { page?: number; limit?: number },
) {
  const row = await visibleComparison(auth, knex, id);
  if (row.status !== 'ready') {
    throw new ConflictError(`the comparison is ${row.status}: its changes can be listed once it is ready`);
  }
  const page = input.page ?? 1;
  const limit = input.limit ?? 20;
  const total = Number(row.changeCount ?? 0);
  const rows = (await ComparisonChange.scoped(auth.companyId, knex)
    .where({ comparisonId: row.id })
    .where('seq', '>', (page - 1) * limit)
    .orderBy('seq')
    .limit(limit)
    .select('seq', 'sheet', 'kind', 'key', 'baseRow', 'targetRow', 'columns')) as unknown as ChangeRow[];
  return {
    data: rows.map(presentChange),
    meta: { page, limit, total, totalPages: Math.ceil(total / limit) },
  };
}

/**
 * Before a file is deleted (inside the delete's transaction): the comparison workflows in flight, to cancel
 * after commit (their rows and changes go with the file by cascade).
 */
export async function comparisonLeftovers(
  trx: Knex.Transaction,
  companyId: string,
  fileId: string,
): Promise<string[]> {
  const rows = await Comparison.scoped(companyId, trx)
    .where({ fileId })
    .whereIn('status', ['queued', 'comparing'])
    .whereNotNull('workflowId')
    .select('workflowId');
  return rows.map((r) => r.workflowId!);
}

export async function cancelComparisons(temporal: Client, workflowIds: readonly string[]): Promise<void> {
  for (const id of workflowIds) {
    try {
      await temporal.workflow.getHandle(id).cancel();
    } catch {
      // finished meanwhile, or never started
    }
  }
}

/**
 * The comparisons whose target version the actor may see (visibleComparison's rule), newest first, a page
 * at a time: what the AI-agent endpoint lists as resources.
 */
export async function visibleComparisons(
  auth: FileActor,
  knex: Knex,
  page: { offset: number; limit: number },
): Promise<Comparison[]> {
  return await Comparison.scoped(auth.companyId, knex)
    .whereExists(visibleFiles(auth, knex).select(1).whereColumn('files.id', 'comparisons.fileId'))
    .orderBy([
      { column: 'comparisons.queuedAt', order: 'desc' },
      { column: 'comparisons.id', order: 'desc' },
    ])
    .offset(page.offset)
    .limit(page.limit);
}
