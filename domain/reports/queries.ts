import { auditActor, recordAudit } from '../audit/record';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { FileActor } from '../files/access';
import { ConflictError } from '../../common/errors';
import type { Storage } from '../../common/storage';
import { Report } from '../../db/models';
import type { UnitOfWork } from '../../db/transaction';
import { REPORT_WORKFLOW, reportStart } from '../../workflows/definitions/reports';
import { visibleVersion } from './access';
import { visibleFiles } from '../files/access';
import { presentReport, type ReportView } from './present';
import { readResult } from './result';
import { withCompany } from '../../db/unitOfWork';

export interface ReportDeps {
  knex: Knex;
  storage: Storage;
  temporal: Client;
  taskQueue: string;
}

/** GET …/report: the report of a version the principal may see (`latest`: the file's newest version). */
export async function getReport(
  deps: Pick<ReportDeps, 'knex' | 'storage'>,
  auth: FileActor,
  fileId: string,
  version: number | 'latest',
): Promise<ReportView> {
  const { row, report } = await withCompany(deps.knex, auth.companyId, async (trx) => {
    const found = await visibleVersion(auth, trx, fileId, version);
    return {
      row: found,
      report: await Report.scoped(auth.companyId, trx).findOne({ fileVersionId: found.id }),
    };
  });
  return presentReport(row, report, report ? await readResult(deps.storage, report) : null);
}

/**
 * POST …/report/rebuild: a new build of the version's report (its number + 1), started after commit as
 * `report:<fileId>:v<n>:rebuild-<build>`. 409 while a build is queued or building. The report shows the
 * new build at once (queued, no profile); the previous result object is removed after commit.
 */
export async function requestRebuild(
  deps: ReportDeps,
  auth: FileActor,
  uow: UnitOfWork,
  fileId: string,
  version: number,
  correlationId?: string,
): Promise<ReportView> {
  const { trx } = uow;
  // the file share-locked first, as a comment's: a delete under way is waited for (then 404), or waits for
  // this request and cancels the new build; unlocked, the report row the delete was removing answered 409
  await visibleFiles(auth, trx).findById(fileId).forShare();
  const row = await visibleVersion(auth, trx, fileId, version);
  let report = await Report.scoped(auth.companyId, trx).findOne({ fileVersionId: row.id }).forUpdate();
  if (!report || report.status === 'queued' || report.status === 'building') {
    throw new ConflictError(
      'a report of this version is already being built; try again when it is ready or failed',
    );
  }
  const build = report.build + 1;
  const start = reportStart(
    { companyId: auth.companyId, fileId, fileVersionId: row.id, version, build, correlationId },
    { taskQueue: deps.taskQueue, correlationId },
  );
  const oldObject = report.resultObjectKey;
  report = await report.$query(trx).patchAndFetch({
    status: 'queued',
    build,
    workflowId: start.workflowId,
    correlationId: correlationId ?? null,
    queuedAt: new Date(),
    startedAt: null,
    finishedAt: null,
    failureReason: null,
    failureMessage: null,
    rowsRead: null,
    bytesRead: null,
    bytesTotal: null,
    phase: null,
    result: null,
    resultObjectKey: null,
    resultBytes: null,
  });
  await recordAudit(trx, {
    ...auditActor(auth, correlationId ?? uow.correlationId),
    action: 'report.rebuild_requested',
    resourceType: 'report',
    resourceId: report.id,
    details: { fileId, version, build },
  });
  uow.afterCommit(async () => {
    if (oldObject)
      await deps.storage.client.removeObject(deps.storage.bucket, oldObject).catch(() => undefined);
    await deps.temporal.workflow.start(REPORT_WORKFLOW, start);
  });
  return presentReport(row, report, null);
}

/**
 * Before a file is deleted (inside the delete's transaction, after the file row is locked): the builds
 * to cancel and the result objects to remove once the rows are gone.
 */
export async function reportLeftovers(
  trx: Knex.Transaction,
  companyId: string,
  fileId: string,
): Promise<{ workflowIds: string[]; objectKeys: string[] }> {
  const rows = await Report.scoped(companyId, trx)
    .where({ fileId })
    .select('status', 'workflowId', 'resultObjectKey');
  return {
    workflowIds: rows
      .filter((r) => (r.status === 'queued' || r.status === 'building') && r.workflowId)
      .map((r) => r.workflowId!),
    objectKeys: rows.filter((r) => r.resultObjectKey).map((r) => r.resultObjectKey!),
  };
}

/** After the delete commits: cancels the builds in flight (each stops and leaves nothing behind). */
export async function cancelBuilds(temporal: Client, workflowIds: readonly string[]): Promise<void> {
  for (const id of workflowIds) {
    try {
      await temporal.workflow.getHandle(id).cancel();
    } catch {
      // finished meanwhile, or never started: nothing to cancel
    }
  }
}

/**
 * The reports of every version the actor may see (visibleFiles' rule), newest file first, a page at a time
 * (`offset`, `limit`): what the AI-agent endpoint lists as resources.
 */
export function visibleReports(
  auth: FileActor,
  knex: Knex,
  page: { offset: number; limit: number },
): Promise<Array<{ fileId: string; version: number; status: string; originalName: string }>> {
  return Report.scoped(auth.companyId, knex)
    .join('files', 'files.id', 'reports.fileId')
    .whereExists(visibleFiles(auth, knex).select(1).whereColumn('files.id', 'reports.fileId'))
    .select('reports.fileId', 'reports.version', 'reports.status', 'files.originalName')
    .orderBy([
      { column: 'reports.fileId', order: 'desc' },
      { column: 'reports.version', order: 'desc' },
    ])
    .offset(page.offset)
    .limit(page.limit) as unknown as Promise<
    Array<{ fileId: string; version: number; status: string; originalName: string }>
  >;
}
