import { withholdClientAddress } from '../../../common/requestContext';
import { openDemo } from '../../../domain/identity/demo';
import { route } from '../../routing';
import { tokenPairSchema } from '../../schemas';
import { unitsOfWork } from '../../unitOfWork';

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
      // the demo company's audit log is read by every visitor: it records no visitor's address
      withholdClientAddress();
      const pair = await openDemo(ctx.deps, unitsOfWork(ctx));
      return { status: 201, body: pair, headers: { 'Cache-Control': 'no-store' } };
    },
  }),
];
