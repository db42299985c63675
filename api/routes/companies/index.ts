import { recordAudit } from '../../../db/audit';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { unitOfWork } from '../../../db/unitOfWork';

const companySchema = {
  type: 'object',
  required: ['id', 'name', 'status', 'plan', 'createdAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    status: { enum: ['active', 'suspended'] },
    plan: { enum: ['free', 'basic', 'premium', null] },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

interface CompanyRow {
  id: string;
  name: string;
  status: string;
  plan: string | null;
  createdAt: Date;
}

const present = (c: CompanyRow) => ({
  id: c.id,
  name: c.name,
  status: c.status,
  plan: c.plan,
  createdAt: c.createdAt.toISOString(),
});

export const companyRoutes = [
  route({
    method: 'get',
    path: '/companies/me',
    summary: 'The caller’s company (admin session)',
    tag: 'Company',
    access: { roles: ['admin'] },
    responses: { 200: { description: 'the company', schema: companySchema } },
    handler: async (ctx) => {
      const auth = principalOf(ctx);
      const company = (await ctx.deps.knex('companies').where({ id: auth.companyId }).first()) as CompanyRow;
      return { body: present(company) };
    },
  }),
  route({
    method: 'patch',
    path: '/companies/me',
    summary: 'Change the company’s details (admin session; keys never can)',
    tag: 'Company',
    access: { roles: ['admin'] },
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
    },
    responses: { 200: { description: 'the company', schema: companySchema } },
    handler: async (ctx, { body }: { body: { name?: string } }) => {
      const auth = principalOf(ctx);
      const company = await unitOfWork(ctx.deps.knex, async (trx) => {
        const [row] = (await trx('companies')
          .where({ id: auth.companyId })
          .update({ ...body, updatedAt: trx.fn.now() })
          .returning('*')) as CompanyRow[];
        await recordAudit(trx, {
          companyId: auth.companyId,
          personId: auth.personId,
          action: 'company.updated',
          resourceType: 'company',
          resourceId: auth.companyId,
          correlationId: ctx.state.correlationId,
          details: body,
        });
        return row;
      });
      return { body: present(company) };
    },
  }),
];
