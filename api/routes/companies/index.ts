import { companyOf, updateCompany } from '../../../domain/identity/companies';
import { presentCompany } from '../../../domain/identity/present';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { inUnitOfWork } from '../../unitOfWork';
import { NOT_BLANK } from '../../schemas';

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

export const companyRoutes = [
  route({
    method: 'get',
    path: '/companies/me',
    summary: 'The caller’s company (admin session)',
    tag: 'Company',
    access: { roles: ['admin'] },
    responses: { 200: { description: 'the company', schema: companySchema } },
    handler: async (ctx) => {
      return { body: presentCompany(await companyOf(principalOf(ctx), ctx.deps.knex)) };
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
      properties: { name: { type: 'string', minLength: 1, maxLength: 200, pattern: NOT_BLANK } },
    },
    responses: { 200: { description: 'the company', schema: companySchema } },
    handler: async (ctx, { body }: { body: { name?: string } }) => {
      const auth = principalOf(ctx);
      const company = await inUnitOfWork(ctx, (uow) => updateCompany(auth, uow, body));
      return { body: presentCompany(company) };
    },
  }),
];
