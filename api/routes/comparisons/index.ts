import { transact } from '../../../db/transaction';
import { requestComparison } from '../../../domain/comparisons/commands';
import { getAutomaticComparison, getComparison, listChanges } from '../../../domain/comparisons/queries';
import type { AppContext } from '../../context';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { pageEnvelopeSchema, pageQuerySchema, uuidParams } from '../../schemas';
import { versionParams } from '../files';
import { changeSchema, comparisonRequestSchema, comparisonSchema } from './schemas';

const TAG = 'Comparisons';
const read = { roles: ['admin', 'employee'], keyScope: 'files:read' } as const;
const notFound = { description: 'no such comparison, file or version, or the caller may not see the file' };

function commandDeps(ctx: AppContext) {
  const { storage, temporal, config } = ctx.deps;
  return {
    storage,
    temporal,
    taskQueue: config.temporal.taskQueue,
    maxColumns: config.files.maxColumns,
    xlsxMaxEntries: config.files.xlsxMaxEntries,
  };
}

interface ComparisonBody {
  base: { fileId: string; version: number };
  target: { fileId: string; version: number };
  keyColumns?: string[];
}

export const comparisonRoutes = [
  route({
    method: 'get',
    path: '/files/:id/versions/:version/comparison',
    summary:
      'The automatic comparison of a version with the previous one (workflow `comparison:<fileId>:v<n-1>:v<n>`): status, progress, and the summary when ready; 404 for version 1',
    tag: TAG,
    access: read,
    params: versionParams,
    responses: { 200: { description: 'the comparison', schema: comparisonSchema }, 404: notFound },
    handler: async (ctx, { params }: { params: { id: string; version: number } }) => ({
      body: await getAutomaticComparison(ctx.deps.knex, principalOf(ctx), params.id, params.version),
    }),
  }),
  route({
    method: 'post',
    path: '/comparisons',
    summary:
      'Compare two versions of one file (key columns optional). Accepted at once (202), run by the worker. Requested comparisons send no events (the events belong to a new version). Idempotency-Key honoured.',
    tag: TAG,
    access: read,
    body: comparisonRequestSchema,
    idempotent: true,
    responses: {
      202: { description: 'accepted: the comparison, queued', schema: comparisonSchema },
      400: { description: 'a named key column is not in the header of either version' },
      404: notFound,
      422: {
        description:
          'base and target are not versions of the same file; or key columns are named and the header of either version cannot be read (the message names the version and what is wrong: a workbook part that is not well-formed XML or does not unpack)',
      },
    },
    handler: async (ctx, { body }: { body: ComparisonBody }) => {
      const auth = principalOf(ctx);
      const view = await transact(
        ctx.deps.knex,
        (uow) => requestComparison(commandDeps(ctx), auth, uow, body, ctx.state.correlationId),
        { correlationId: ctx.state.correlationId, log: ctx.state.log },
      );
      return { status: 202, headers: { Location: `/comparisons/${view.id}` }, body: view };
    },
  }),
  route({
    method: 'get',
    path: '/comparisons/:id',
    summary:
      "A comparison: status (queued — also while it waits, at most COMPARISON_REPORT_WAIT_SECONDS, for both versions' reports to settle, whose inferred types it takes —, comparing, ready, failed), progress, failure reason, summary when ready",
    tag: TAG,
    access: read,
    params: uuidParams,
    responses: { 200: { description: 'the comparison', schema: comparisonSchema }, 404: notFound },
    handler: async (ctx, { params }: { params: { id: string } }) => ({
      body: await getComparison(ctx.deps.knex, principalOf(ctx), params.id),
    }),
  }),
  route({
    method: 'get',
    path: '/comparisons/:id/changes',
    summary:
      'The row changes of a ready comparison, page by page in sheet then row order (values as typed; shown only to callers who can see the file); 409 until ready',
    tag: TAG,
    access: read,
    params: uuidParams,
    query: pageQuerySchema,
    responses: {
      200: { description: 'page-number list', schema: pageEnvelopeSchema(changeSchema) },
      404: notFound,
      409: { description: 'the comparison is not ready' },
    },
    handler: async (
      ctx,
      { params, query }: { params: { id: string }; query: { page?: number; limit?: number } },
    ) => ({
      body: await listChanges(ctx.deps.knex, principalOf(ctx), params.id, query),
    }),
  }),
];
