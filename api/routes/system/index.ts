import { checkStorage } from '../../../common/storage';
import { checkTemporal } from '../../../common/temporal';
import { ServiceUnavailableError } from '../../../common/errors';
import type { AppDeps } from '../../context';
import { route } from '../../routing';

type DependencyName = 'postgres' | 'temporal' | 'minio';

const CHECK_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export async function checkDependencies(
  deps: AppDeps,
): Promise<Record<DependencyName, { status: 'up' | 'down'; error?: string }>> {
  const checks: Record<DependencyName, () => Promise<unknown>> = {
    postgres: () => deps.knex.raw('select 1'),
    temporal: () => checkTemporal(deps.temporal, CHECK_TIMEOUT_MS),
    minio: () => checkStorage(deps.storage),
  };
  const names = Object.keys(checks) as DependencyName[];
  const results = await Promise.allSettled(names.map((n) => withTimeout(checks[n](), CHECK_TIMEOUT_MS)));
  const out = {} as Record<DependencyName, { status: 'up' | 'down'; error?: string }>;
  names.forEach((name, i) => {
    const r = results[i];
    out[name] =
      r.status === 'fulfilled'
        ? { status: 'up' }
        : {
            status: 'down',
            error: r.reason instanceof Error ? r.reason.message.split('\n')[0] : 'unreachable',
          };
  });
  return out;
}

const dependencySchema = {
  type: 'object',
  properties: { status: { enum: ['up', 'down'] }, error: { type: 'string' } },
  required: ['status'],
};

export const systemRoutes = [
  route({
    method: 'get',
    path: '/health',
    summary: 'Liveness: the process answers',
    tag: 'System',
    access: { public: true },
    responses: {
      200: { description: 'alive', schema: { type: 'object', properties: { status: { const: 'ok' } } } },
    },
    handler: async () => ({ body: { status: 'ok' } }),
  }),
  route({
    method: 'get',
    path: '/ready',
    summary: 'Readiness: PostgreSQL, Temporal and MinIO answer',
    tag: 'System',
    access: { public: true },
    responses: {
      200: {
        description: 'every dependency answers',
        schema: {
          type: 'object',
          properties: {
            status: { const: 'ready' },
            checks: {
              type: 'object',
              properties: { postgres: dependencySchema, temporal: dependencySchema, minio: dependencySchema },
            },
          },
        },
      },
      503: { description: 'a dependency is down; the message names it and `checks` has each one' },
    },
    handler: async (ctx) => {
      const checks = await checkDependencies(ctx.deps);
      const down = Object.entries(checks)
        .filter(([, c]) => c.status === 'down')
        .map(([name]) => name);
      if (down.length > 0) {
        throw new ServiceUnavailableError(`not ready: ${down.join(', ')} down`, { checks });
      }
      return { body: { status: 'ready', checks } };
    },
  }),
];
