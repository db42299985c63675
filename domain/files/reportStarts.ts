import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { ANALYSIS_START_GRACE_MS } from './analysisGrace';
import { REPORT_WORKFLOW, reportStart, type ReportWorkflowInput } from '../../workflows/definitions/reports';
import { startAutomaticComparison } from '../comparisons/commands';
import { COMPARISON_WORKFLOW, comparisonStart } from '../../workflows/definitions/comparisons';

/**
 * Starts the report workflow of one version (`report:<fileId>:v<n>`). Rejects with
 * WorkflowExecutionAlreadyStartedError when that workflow was started already.
 */
export async function startReport(
  temporal: Client,
  input: ReportWorkflowInput,
  params: { taskQueue: string; correlationId?: string },
): Promise<void> {
  await temporal.workflow.start(REPORT_WORKFLOW, reportStart(input, params));
}

/** Runs each start; one refused as already started counts as running (the workflow id is the upload's own). */
async function startAll(starts: Array<() => Promise<void>>): Promise<{ started: number; running: number }> {
  let started = 0;
  let running = 0;
  for (const start of starts) {
    try {
      await start();
      started++;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      running++;
    }
  }
  return { started, running };
}

/** What one sweep started, and found already running, of each kind. */
export interface MissingAnalysisStarts {
  reportsStarted: number;
  reportsRunning: number;
  comparisonsStarted: number;
  comparisonsRunning: number;
  rebuildsStarted: number;
  rebuildsRunning: number;
  requestedComparisonsStarted: number;
  requestedComparisonsRunning: number;
}

/** A sweep that started nothing (no Temporal client to start with). */
export const NO_STARTS: Readonly<MissingAnalysisStarts> = {
  reportsStarted: 0,
  reportsRunning: 0,
  comparisonsStarted: 0,
  comparisonsRunning: 0,
  rebuildsStarted: 0,
  rebuildsRunning: 0,
  requestedComparisonsStarted: 0,
  requestedComparisonsRunning: 0,
};

/**
 * Starts again the workflows an upload starts after its commit, for versions uploaded some minutes ago that
 * still lack their row: the start after commit is not awaited by the upload and only logged when it fails
 * (Temporal down). The report workflow `report:<fileId>:v<n>` of a version without a `reports` row, and the
 * automatic comparison `comparison:<fileId>:v<n-1>:v<n>` of a version n > 1 without an automatic
 * `comparisons` row. The ids are the upload's own, so a workflow still running is not started twice
 * (WorkflowExecutionAlreadyStarted counts as running). At most `limit` versions of each kind per call, oldest
 * first, among those uploaded in the last `withinMs` (a week): one that keeps failing is tried hourly for a
 * week, and cannot hold back newer versions behind it for ever.
 *
 * The same for what a request starts after its commit: a report rebuild (`…:rebuild-<build>`) and a requested
 * comparison (`comparison:<fileId>:v<a>:v<b>:<id>`) whose row is still `queued` some minutes after it was
 * queued are started again under their own workflow ids (one still running, queued behind others, counts as
 * running), so a start lost to a Temporal outage never leaves a build or a comparison queued for good.
 */
export async function startMissingAnalyses(
  knex: Knex,
  temporal: Client,
  taskQueue: string,
  {
    olderThanMs = ANALYSIS_START_GRACE_MS,
    withinMs = 7 * 24 * 3_600_000,
    now = Date.now(),
    limit = 500,
  } = {},
): Promise<MissingAnalysisStarts> {
  /** rows whose `column` is some minutes old, within the week, oldest first, at most `limit` */
  const inWindow = (q: Knex.QueryBuilder, column: string) =>
    q
      .where(column, '<', new Date(now - olderThanMs))
      .where(column, '>', new Date(now - withinMs))
      .orderBy(column)
      .limit(limit);
  const recent = (q: Knex.QueryBuilder) => inWindow(q, 'v.createdAt');
  const unreported = (await recent(
    knex('fileVersions as v').leftJoin('reports as r', 'r.fileVersionId', 'v.id').whereNull('r.id'),
  ).select('v.id', 'v.companyId', 'v.fileId', 'v.version')) as Array<{
    id: string;
    companyId: string;
    fileId: string;
    version: number;
  }>;
  const uncompared = (await recent(
    knex('fileVersions as v')
      .join('fileVersions as p', (j) =>
        j.on('p.fileId', 'v.fileId').andOn('p.version', '=', knex.raw('?? - 1', ['v.version'])),
      )
      .leftJoin('comparisons as c', (j) =>
        j.on('c.targetVersionId', 'v.id').andOn('c.automatic', knex.raw('true')),
      )
      .whereNull('c.id'),
  ).select('v.id', 'v.companyId', 'v.fileId', 'v.version', 'p.id as previousId')) as Array<{
    id: string;
    companyId: string;
    fileId: string;
    version: number;
    previousId: string;
  }>;
  /** rows queued some minutes ago, within the week, oldest first */
  const stillQueued = (q: Knex.QueryBuilder, table: string) =>
    inWindow(q.where(`${table}.status`, 'queued'), `${table}.queuedAt`);
  const rebuilds = (await stillQueued(
    knex('reports as r').join('fileVersions as v', 'v.id', 'r.fileVersionId').where('r.build', '>', 1),
    'r',
  ).select(
    'r.companyId',
    'r.fileId',
    'r.fileVersionId',
    'v.version',
    'r.build',
    'r.correlationId',
  )) as Array<{
    companyId: string;
    fileId: string;
    fileVersionId: string;
    version: number;
    build: number;
    correlationId: string | null;
  }>;
  const requested = (await stillQueued(knex('comparisons as c').where('c.automatic', false), 'c').select(
    'c.id',
    'c.companyId',
    'c.fileId',
    'c.baseVersion',
    'c.targetVersion',
    'c.correlationId',
  )) as Array<{
    id: string;
    companyId: string;
    fileId: string;
    baseVersion: number;
    targetVersion: number;
    correlationId: string | null;
  }>;
  const reports = await startAll(
    unreported.map(
      (v) => () =>
        startReport(
          temporal,
          { companyId: v.companyId, fileId: v.fileId, fileVersionId: v.id, version: v.version },
          { taskQueue },
        ),
    ),
  );
  const comparisons = await startAll(
    uncompared.map(
      (v) => () =>
        startAutomaticComparison(temporal, taskQueue, {
          companyId: v.companyId,
          fileId: v.fileId,
          baseVersionId: v.previousId,
          targetVersionId: v.id,
          baseVersion: v.version - 1,
          targetVersion: v.version,
        }),
    ),
  );
  const rebuilt = await startAll(
    rebuilds.map((r) => () => {
      const correlationId = r.correlationId ?? undefined;
      return startReport(
        temporal,
        {
          companyId: r.companyId,
          fileId: r.fileId,
          fileVersionId: r.fileVersionId,
          version: r.version,
          build: r.build,
          correlationId,
        },
        { taskQueue, correlationId },
      );
    }),
  );
  const compared = await startAll(
    requested.map((c) => async () => {
      const correlationId = c.correlationId ?? undefined;
      await temporal.workflow.start(
        COMPARISON_WORKFLOW,
        comparisonStart(
          {
            fileId: c.fileId,
            baseVersion: c.baseVersion,
            targetVersion: c.targetVersion,
            comparisonId: c.id,
          },
          { companyId: c.companyId, comparisonId: c.id, correlationId },
          { taskQueue, correlationId },
        ),
      );
    }),
  );
  return {
    rebuildsStarted: rebuilt.started,
    rebuildsRunning: rebuilt.running,
    requestedComparisonsStarted: compared.started,
    requestedComparisonsRunning: compared.running,
    reportsStarted: reports.started,
    reportsRunning: reports.running,
    comparisonsStarted: comparisons.started,
    comparisonsRunning: comparisons.running,
  };
}
