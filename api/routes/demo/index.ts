import { ForbiddenError, NotFoundError } from '../../../common/errors';
import { seedDemoCompany } from '../../demo/seed';
import { keysOf } from '../../auth/keys';
import { startSession } from '../../auth/sessions';
import { route } from '../../routing';
import { tokenPairSchema } from '../../schemas';
import { unitOfWork } from '../../../db/unitOfWork';

export const demoRoutes = [
  route({
    method: 'post',
    path: '/demo/sessions',
    summary: 'Open the demo: a read-only session on the demo company (every write answers 403)',
    tag: 'Demo',
    access: { public: true, system: 'demo' },
    bucket: 'demo',
    responses: {
      201: { description: 'the token pair of a new read-only demo session', schema: tokenPairSchema },
      403: { description: 'the demo is closed (an operator suspended the demo company)' },
      404: { description: 'the demo is not enabled on this service (DEMO_ENABLED=false)' },
      429: { description: 'more than 20 openings a minute from this address' },
    },
    handler: async (ctx) => {
      const { knex, config } = ctx.deps;
      if (!config.demoEnabled) throw new NotFoundError('the demo is not enabled on this service');
      const demo = await seedDemoCompany(knex, config.secretKey);
      const pair = await unitOfWork(knex, async (trx) => {
        const company = (await trx('companies').where({ id: demo.companyId }).select('status').first()) as {
          status: string;
        };
        if (company.status !== 'active') throw new ForbiddenError('the demo is closed');
        return startSession(
          trx,
          keysOf(config).session,
          { id: demo.visitorId, companyId: demo.companyId },
          { method: 'demo', demo: true, correlationId: ctx.state.correlationId },
        );
      });
      return { status: 201, body: pair, headers: { 'Cache-Control': 'no-store' } };
    },
  }),
];
