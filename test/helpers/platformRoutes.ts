/** Test-only routes that exercise the platform machinery (mounted on an app of the test's own). */
import { randomUUID } from 'node:crypto';
import { cursorList, cursorQuerySchema, cursorEnvelope, type CursorQuery } from '../../api/lists';
import { route } from '../../api/routing';

/** Creations held until the test releases them, to observe a request still running. */
export const gate = {
  calls: 0,
  release: (): void => undefined,
  closed: Promise.resolve(),
  close(): void {
    this.closed = new Promise<void>((resolve) => {
      this.release = resolve;
    });
  },
  open(): void {
    this.release();
    this.closed = Promise.resolve();
  },
};

const nameBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 20 } },
} as const;

/** The 201 answer of both test creations; the gated one adds its call number `n`. */
const thingSchema = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: { type: 'string' }, name: { type: 'string' } },
} as const;

export const platformTestRoutes = [
  route({
    method: 'post',
    path: '/_test/things',
    summary: 'test only: creates a thing (waits while the gate is closed)',
    tag: 'Test',
    access: { roles: ['admin', 'employee'], keyScope: 'files:write' },
    idempotent: true,
    body: nameBody,
    responses: {
      201: {
        description: 'created',
        schema: {
          ...thingSchema,
          required: [...thingSchema.required, 'n'],
          properties: { ...thingSchema.properties, n: { type: 'integer' } },
        },
      },
    },
    handler: async (_ctx, { body }) => {
      gate.calls += 1;
      const n = gate.calls;
      await gate.closed;
      return {
        status: 201,
        body: { id: randomUUID(), name: (body as { name: string }).name, n },
        headers: { Location: `/_test/things/${n}` },
      };
    },
  }),
  route({
    method: 'post',
    path: '/_test/public-things',
    summary: 'test only: a public creation',
    tag: 'Test',
    access: { public: true },
    idempotent: true,
    body: nameBody,
    responses: {
      201: {
        description: 'created',
        schema: thingSchema,
      },
    },
    handler: async (_ctx, { body }) => ({
      status: 201,
      body: { id: randomUUID(), name: (body as { name: string }).name },
    }),
  }),
  route({
    method: 'get',
    path: '/_test/needs-plan',
    summary: 'test only: work that needs a plan',
    tag: 'Test',
    access: { roles: ['admin', 'employee'], keyScope: 'files:read' },
    needsPlan: true,
    responses: {
      200: {
        description: 'the plan',
        schema: { type: 'object', required: ['plan'], properties: { plan: { type: 'string' } } },
      },
    },
    handler: async (ctx) => ({ body: { plan: ctx.state.auth!.companyPlan } }),
  }),
  route({
    method: 'get',
    path: '/_test/audit',
    summary: "test only: the company's audit records as a cursor list",
    tag: 'Test',
    access: { roles: ['admin', 'employee'] },
    query: cursorQuerySchema,
    responses: {
      200: {
        description: 'cursor list',
        schema: cursorEnvelope({
          type: 'object',
          required: ['id', 'action'],
          properties: { id: { type: 'string' }, action: { type: 'string' } },
        }),
      },
    },
    handler: async (ctx, { query }) => {
      const auth = ctx.state.auth!;
      const q = ctx.deps.knex('auditLog').where({ companyId: auth.companyId });
      const list = await cursorList(q, query as CursorQuery, {
        list: 'test-audit',
        companyId: auth.companyId,
        secretKey: ctx.deps.config.secretKey,
        present: (row: { id: string; action: string }) => ({ id: row.id, action: row.action }),
      });
      return { body: list };
    },
  }),
];

export type PlatformTestRoutes = typeof platformTestRoutes;
