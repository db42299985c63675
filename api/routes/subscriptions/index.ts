import type { PlanName } from '../../../domain/plans/plans';
import { choosePlan, listPlans, subscriptionOf } from '../../../domain/plans/subscriptions';
import { principalOf } from '../../middlewares/authenticate';
import { namedSchema } from '../../openapi';
import { route } from '../../routing';
import { inUnitOfWork } from '../../unitOfWork';

const limitOrNone = { type: ['integer', 'null'], minimum: 0, description: 'null: no limit' } as const;

export const planLimitsSchema = namedSchema('PlanLimits', {
  type: 'object',
  additionalProperties: false,
  required: [
    'requestsPerMinute',
    'filesPerPeriod',
    'billsExcessFiles',
    'webhookEndpoints',
    'people',
    'rules',
    'versionsPerFile',
    'monthlyPriceCents',
    'excessFileCents',
  ],
  properties: {
    requestsPerMinute: { type: 'integer', description: 'API-key requests per minute, shared by all keys' },
    filesPerPeriod: { type: 'integer', description: 'uploads (files and new versions) per billing period' },
    billsExcessFiles: {
      type: 'boolean',
      description: 'over the quota: false refuses uploads with 402, true goes on and bills each excess file',
    },
    webhookEndpoints: limitOrNone,
    people: limitOrNone,
    rules: limitOrNone,
    versionsPerFile: limitOrNone,
    monthlyPriceCents: { type: 'integer' },
    excessFileCents: { type: 'integer' },
  },
} as const);

export const planSchema = namedSchema('Plan', {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'limits'],
  properties: { name: { enum: ['free', 'basic', 'premium'] }, limits: planLimitsSchema },
} as const);

export const subscriptionSchema = namedSchema('Subscription', {
  type: 'object',
  additionalProperties: false,
  required: ['plan', 'limits', 'periodKey', 'periodStart', 'periodEnd', 'filesUsed', 'filesLimit'],
  properties: {
    plan: { enum: ['free', 'basic', 'premium', null], description: 'null until the company chooses one' },
    limits: { oneOf: [planLimitsSchema, { type: 'null' }] },
    periodKey: {
      type: 'string',
      description: 'the current billing period (calendar month, UTC), e.g. 2026-11',
    },
    periodStart: { type: 'string', format: 'date-time' },
    periodEnd: { type: 'string', format: 'date-time', description: 'exclusive' },
    filesUsed: { type: 'integer', minimum: 0, description: 'uploads counted in this period' },
    filesLimit: { type: ['integer', 'null'], description: "the plan's file quota; null without a plan" },
  },
} as const);

export const choosePlanSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['plan'],
  properties: { plan: { enum: ['free', 'basic', 'premium'] } },
} as const;

export const subscriptionRoutes = [
  route({
    method: 'get',
    path: '/plans',
    summary: 'The plans and their limits',
    tag: 'Subscriptions',
    access: { public: true },
    responses: {
      200: {
        description: 'every plan, cheapest first',
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['data'],
          properties: { data: { type: 'array', items: planSchema } },
        },
      },
    },
    handler: async () => ({ body: { data: listPlans() } }),
  }),
  route({
    method: 'get',
    path: '/subscriptions/me',
    summary: "The company's plan, its limits and the file quota used in this billing period",
    tag: 'Subscriptions',
    access: { roles: ['admin', 'employee'], keyScope: 'files:read' },
    responses: { 200: { description: 'the subscription', schema: subscriptionSchema } },
    handler: async (ctx) => {
      const auth = principalOf(ctx);
      return { body: await subscriptionOf(ctx.deps.knex, auth.companyId, auth.companyPlan) };
    },
  }),
  route({
    method: 'patch',
    path: '/subscriptions/me',
    summary: 'Choose or change the plan',
    tag: 'Subscriptions',
    access: { roles: ['admin'] },
    bucket: 'plan',
    body: choosePlanSchema,
    responses: {
      200: {
        description: 'the subscription on the chosen plan (choosing the current plan changes nothing)',
        schema: subscriptionSchema,
      },
    },
    handler: async (ctx, { body }: { body: { plan: PlanName } }) => {
      const auth = principalOf(ctx);
      return { body: await inUnitOfWork(ctx, (uow) => choosePlan(auth, uow, body.plan)) };
    },
  }),
];
