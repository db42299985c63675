import { transact } from '../../../db/transaction';
import { getReport, requestRebuild } from '../../../domain/reports/queries';
import type { AppContext } from '../../context';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { uuidParams } from '../../schemas';
import { versionParams } from '../files';
import { reportSchema } from './schemas';

const TAG = 'Reports';
const read = { roles: ['admin', 'employee'], keyScope: 'files:read' } as const;
const write = { roles: ['admin', 'employee'], keyScope: 'files:write' } as const;

function deps(ctx: AppContext) {
  const { knex, storage, temporal, config } = ctx.deps;
  return { knex, storage, temporal, taskQueue: config.temporal.taskQueue };
}

const notFound = { description: 'no such file or version, or the caller may not see the file' };

export const reportRoutes = [
  route({
    method: 'get',
    path: '/files/:id/versions/:version/report',
    summary:
      'The report of a version: status, progress while building, failure reason, and the profile when ready',
    tag: TAG,
    access: read,
    params: versionParams,
    responses: {
      200: {
        description:
          'the report: queued → building (with progress) → ready (with the profile) | failed (with a reason code). ' +
          'A result up to REPORT_INLINE_MAX_BYTES is kept in PostgreSQL, a larger one in object storage; the answer is the same',
        schema: reportSchema,
      },
      404: notFound,
    },
    handler: async (ctx, { params }: { params: { id: string; version: number } }) => ({
      body: await getReport(deps(ctx), principalOf(ctx), params.id, params.version),
    }),
  }),
  route({
    method: 'get',
    path: '/files/:id/report',
    summary: "The report of the file's newest version",
    tag: TAG,
    access: read,
    params: uuidParams,
    responses: { 200: { description: 'the report', schema: reportSchema }, 404: notFound },
    handler: async (ctx, { params }: { params: { id: string } }) => ({
      body: await getReport(deps(ctx), principalOf(ctx), params.id, 'latest'),
    }),
  }),
  route({
    method: 'post',
    path: '/files/:id/versions/:version/report/rebuild',
    summary:
      'Build the report of a version again (workflow `report:<fileId>:v<n>:rebuild-<build>`); 409 while a build is queued or building. Idempotency-Key honoured (a retry with the same key replays the first answer).',
    tag: TAG,
    access: write,
    params: versionParams,
    idempotent: true,
    responses: {
      202: { description: 'accepted: the report, queued, with its new build number', schema: reportSchema },
      404: notFound,
      409: { description: 'a build of this report is queued or building' },
    },
    handler: async (ctx, { params }: { params: { id: string; version: number } }) => {
      const auth = principalOf(ctx);
      const view = await transact(
        ctx.deps.knex,
        (uow) => requestRebuild(deps(ctx), auth, uow, params.id, params.version, ctx.state.correlationId),
        { correlationId: ctx.state.correlationId, log: ctx.state.log },
      );
      return {
        status: 202,
        headers: { Location: `/files/${params.id}/versions/${params.version}/report` },
        body: view,
      };
    },
  }),
];
