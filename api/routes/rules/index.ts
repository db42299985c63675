/**
 * Quality rules (issue 13): read under files:read (any role), written under rules:write (admins; an
 * admin's session may write; employees and their keys get 403). Paths and bodies are this service's choice
 * (README "Quality rules and the quality score"). Handlers validate, open the unit of work and call the
 * domain (domain/rules).
 */
import {
  createRule,
  deleteRule,
  updateRule,
  type RuleInput,
  type RulePatch,
} from '../../../domain/rules/commands';
import {
  MAX_ALLOWED_VALUES,
  MAX_REGEX_LENGTH,
  RULE_KINDS,
  SEVERITIES,
  VALUE_TYPES,
} from '../../../domain/rules/kinds';
import { presentRule, ruleSchema } from '../../../domain/rules/present';
import { getRule, listRules } from '../../../domain/rules/queries';
import { transact } from '../../../db/transaction';
import type { AppContext } from '../../context';
import { pageList, type PageQuery } from '../../lists';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';
import { NOT_BLANK, pageEnvelopeSchema, pageQuerySchema, uuidParams } from '../../schemas';

const TAG = 'Quality rules';
const read = { roles: ['admin', 'employee'], keyScope: 'files:read' } as const;
const write = { roles: ['admin'], keyScope: 'rules:write' } as const;

const paramsSchema = {
  type: 'object',
  description:
    'per kind: not_null, unique: none; range: {min?, max?} numbers; length: {min?, max?} integers ≥ 0; ' +
    `pattern: {regex} (RE2 syntax, full match, at most ${MAX_REGEX_LENGTH} characters); ` +
    `allowed_values: {values} (1 to ${MAX_ALLOWED_VALUES} strings); type: {type} (${VALUE_TYPES.join(', ')}); ` +
    'row_count: {min?, max?} integers ≥ 0. Range, length and row_count need min, max or both, min ≤ max.',
} as const;

const fields = {
  name: { type: 'string', minLength: 1, maxLength: 100, pattern: NOT_BLANK },
  kind: { enum: [...RULE_KINDS] },
  column: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: 1000,
    description: 'the column name (exact header); required for column kinds, absent for row_count',
  },
  params: paramsSchema,
  severity: { enum: [...SEVERITIES], description: 'default error' },
  tolerance: {
    type: 'number',
    minimum: 0,
    maximum: 1,
    description: 'share of failing units allowed before the rule fails (or warns); default 0',
  },
  active: { type: 'boolean', description: 'default true' },
  fileIds: {
    type: ['array', 'null'],
    maxItems: 1000,
    uniqueItems: true,
    items: { type: 'string', format: 'uuid' },
    description: 'restrict the rule to these files; null or absent: every file of the company',
  },
} as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'kind'],
  properties: fields,
} as const;

const patchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: fields,
} as const;

function deps(ctx: AppContext) {
  return { correlationId: ctx.state.correlationId };
}

export const rulesRoutes = [
  route({
    method: 'post',
    path: '/rules',
    summary: 'Create a quality rule (admins); evaluated in every report built from now on',
    tag: TAG,
    access: write,
    idempotent: true,
    needsPlan: true,
    body: createBody,
    responses: {
      201: { description: 'the rule', schema: ruleSchema },
      400: {
        description:
          'every problem listed: params of another kind, min > max, an invalid RE2 regex, unknown fields, a missing column',
      },
      402: { description: 'the company has not chosen a plan' },
      403: { description: 'not an admin, or a key without rules:write' },
      409: { description: "the plan's number of rules is reached (Free 5, Basic 50, Premium 500)" },
    },
    handler: async (ctx, { body }: { body: RuleInput }) => {
      const rule = await transact(
        ctx.deps.knex,
        (uow) => createRule(deps(ctx), principalOf(ctx), uow, body),
        {
          correlationId: ctx.state.correlationId,
        },
      );
      return { status: 201, body: presentRule(rule) };
    },
  }),

  route({
    method: 'get',
    path: '/rules',
    summary: "The company's quality rules, newest first (page-number list)",
    tag: TAG,
    access: read,
    query: pageQuerySchema,
    responses: { 200: { description: 'page of rules', schema: pageEnvelopeSchema(ruleSchema) } },
    handler: async (ctx, { query }: { query: PageQuery }) => ({
      body: await pageList(listRules(principalOf(ctx), ctx.deps.knex), query, presentRule),
    }),
  }),

  route({
    method: 'get',
    path: '/rules/:id',
    summary: 'One quality rule',
    tag: TAG,
    access: read,
    params: uuidParams,
    responses: {
      200: { description: 'the rule', schema: ruleSchema },
      404: { description: 'no such rule in the company' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => ({
      body: presentRule(await getRule(principalOf(ctx), ctx.deps.knex, params.id)),
    }),
  }),

  route({
    method: 'patch',
    path: '/rules/:id',
    summary: 'Change a quality rule (admins); the whole rule is checked again after the change',
    tag: TAG,
    access: write,
    params: uuidParams,
    body: patchBody,
    responses: {
      200: { description: 'the rule as it is now', schema: ruleSchema },
      400: { description: 'every problem of the changed rule listed; unknown field; empty body' },
      403: { description: 'not an admin, or a key without rules:write' },
      404: { description: 'no such rule in the company' },
    },
    handler: async (ctx, { params, body }: { params: { id: string }; body: RulePatch }) => {
      const rule = await transact(
        ctx.deps.knex,
        (uow) => updateRule(deps(ctx), principalOf(ctx), uow, params.id, body),
        { correlationId: ctx.state.correlationId },
      );
      return { body: presentRule(rule) };
    },
  }),

  route({
    method: 'delete',
    path: '/rules/:id',
    summary: 'Delete a quality rule (admins); reports already built keep its result',
    tag: TAG,
    access: write,
    params: uuidParams,
    responses: {
      204: { description: 'deleted' },
      403: { description: 'not an admin, or a key without rules:write' },
      404: { description: 'no such rule in the company' },
    },
    handler: async (ctx, { params }: { params: { id: string } }) => {
      await transact(ctx.deps.knex, (uow) => deleteRule(deps(ctx), principalOf(ctx), uow, params.id), {
        correlationId: ctx.state.correlationId,
      });
      return { status: 204 };
    },
  }),
];
