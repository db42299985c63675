import type Router from '@koa/router';
import type { AppContext } from './context';
import type { Config } from '../common/config';
import { BadRequestError } from '../common/errors';
import type { BucketName } from '../domain/plans/plans';
import type { Role, Scope } from '../domain/identity/scopes';
import type { SystemTask } from '../db/unitOfWork';
import { bodyAjv, coerceParameters, compile, describeErrors, nulProblems, queryAjv } from './validation';

// roles and scopes belong to the identity domain; re-exported for the route files that name them
export { SCOPES, type Role, type Scope } from '../domain/identity/scopes';

/**
 * Who may call a route. Keys are refused unless `keyScope` names the scope that opens the route
 * (closed by default).
 */
export type Access =
  | {
      public: true;
      /**
       * The named cross-company task (db/unitOfWork.ts SYSTEM_TASKS) the route's units of work act as: a
       * public route knows no company until it has looked one up (by address, token or key). Without it a
       * public route sees no tenant row.
       */
      system?: SystemTask;
    }
  | {
      public?: false;
      roles: readonly Role[];
      keyScope?: Scope;
      /** a write that a read-only demo session may still make (sign out) */
      demoAllowed?: boolean;
    };

export type JsonSchema = Record<string, unknown>;

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteInput<B = unknown, Q = Record<string, unknown>, P = Record<string, string>> {
  body: B;
  query: Q;
  params: P;
}

export interface RouteSpec {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  /** Koa path, e.g. /api-keys/:id */
  path: string;
  summary: string;
  tag: string;
  access: Access;
  body?: JsonSchema;
  /**
   * A multipart/form-data route (uploads): its handler streams `ctx.req` itself, so no JSON body is
   * parsed or validated; `schema` documents the form's parts for OpenAPI.
   */
  multipart?: { description: string; schema: JsonSchema };
  query?: JsonSchema;
  params?: JsonSchema;
  /**
   * Documented responses: status code → schema (or none for no body), and the media types it is sent as
   * (application/json when absent; several when the request chooses, e.g. by Accept).
   */
  responses: Record<
    number,
    { description: string; schema?: JsonSchema; contentType?: string | readonly string[] }
  >;
  /**
   * A separate per-minute bucket (domain/plans/plans.ts BUCKETS) this route counts against instead of the main
   * request budget: signIn, register, forgotPassword, demo, plan.
   */
  bucket?: BucketName;
  /** Creates something: an Idempotency-Key header makes retries safe (api/middlewares/idempotency.ts). */
  idempotent?: boolean;
  /** Work that needs a chosen plan: 402 until the company has one (api/middlewares/plan.ts). */
  needsPlan?: boolean;
  /**
   * The largest JSON body this route reads (after decompression), when not JSON_BODY_LIMIT_BYTES: the
   * AI-agent endpoint's, sized for a base64 upload. Checked on Content-Length before a byte is read.
   */
  bodyLimitBytes?: (config: Config) => number;
  /** OpenAPI operationId; derived from method and path when absent. */
  operationId?: string;
  handler(ctx: AppContext, input: RouteInput<any, any, any>): Promise<Reply>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const NO_QUERY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };
const ANY_PARAMS: JsonSchema = { type: 'object' };

/**
 * Validates and converts one part of a request (query or path): NUL characters first, then the plain
 * numbers and booleans converted (api/validation.ts coerceParameters), then the schema. Returns the
 * converted values (defaults filled in) and every problem.
 */
function validateParameters(
  where: 'query' | 'path',
  schema: JsonSchema,
  raw: Record<string, unknown>,
): { values: Record<string, unknown>; problems: string[] } {
  const nul = nulProblems(where, raw);
  // no parameter takes several values: one written twice (?limit=1&limit=2) is said so, and its first value is
  // what the schema checks
  const repeated = Object.keys(raw).filter((name) => Array.isArray(raw[name]));
  const single = Object.fromEntries(
    Object.entries(raw).map(([name, v]) => [name, Array.isArray(v) ? (v as unknown[])[0] : v]),
  );
  const values = coerceParameters(schema, single);
  const validate = compile(queryAjv, schema);
  const problems = validate(values) ? [] : describeErrors(where, validate.errors ?? []);
  return {
    values,
    problems: [
      ...repeated.map((name) => `${where} parameter "${name}" is given more than once`),
      ...nul,
      ...problems,
    ],
  };
}

function validateBody(spec: RouteSpec, body: unknown): string[] {
  const empty =
    body === undefined || (typeof body === 'object' && body !== null && Object.keys(body).length === 0);
  if (!spec.body) {
    if (empty) return [];
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      return Object.keys(body).map((k) => `body: unknown field "${k}"`);
    }
    return ['this endpoint takes no request body'];
  }
  const validate = compile(bodyAjv, spec.body);
  const nul = nulProblems('body', body);
  return [...nul, ...(validate(body ?? {}) ? [] : describeErrors('body', validate.errors ?? []))];
}

/**
 * A route's input checked and converted as a request's is (path, query and JSON body; every problem listed
 * in one 400). The HTTP routes and the AI-agent tools (api/mcp/tools.ts) both call it.
 */
export function validateInput(
  spec: RouteSpec,
  raw: { params: Record<string, unknown>; query: Record<string, unknown>; body: unknown },
): RouteInput<unknown, Record<string, unknown>, Record<string, string>> {
  const query = validateParameters('query', spec.query ?? NO_QUERY, raw.query);
  // a route without a params schema still gets the NUL rule
  const params = validateParameters('path', spec.params ?? ANY_PARAMS, raw.params);
  const problems = [
    ...params.problems,
    ...query.problems,
    ...(spec.multipart ? [] : validateBody(spec, raw.body)),
  ];
  if (problems.length > 0) throw new BadRequestError(problems.length === 1 ? problems[0] : problems);
  return {
    body: raw.body ?? {},
    query: query.values,
    params: params.values as Record<string, string>,
  };
}

/** Builds the middleware a route runs before its handler, from the route's spec (e.g. its access rule). */
export type RouteMiddlewareFactory = (
  spec: RouteSpec,
) => (ctx: AppContext, next: () => Promise<unknown>) => Promise<unknown>;

const specOfLayer = new WeakMap<object, RouteSpec>();

/**
 * The route spec a request will reach, found before routing runs (the app-level rate limiter needs it to
 * pick the budget or bucket, and to count unknown routes too). Undefined for unknown paths and methods.
 */
export function findRoute(router: Router, method: string, path: string): RouteSpec | undefined {
  for (const layer of router.match(path, method).pathAndMethod) {
    const spec = specOfLayer.get(layer);
    if (spec) return spec;
  }
  return undefined;
}

/** Registers routes on the router: validation of path, query and body (every mistake listed), then the handler. */
export function mountRoutes(
  router: Router,
  routes: readonly RouteSpec[],
  before: readonly RouteMiddlewareFactory[] = [],
): void {
  for (const spec of routes) {
    const chain = before.map((make) => make(spec));
    const stackSize = router.stack.length;
    router[spec.method](spec.path, ...chain, async (ctx: AppContext) => {
      const input = validateInput(spec, {
        params: { ...(ctx.params as Record<string, string>) },
        query: { ...ctx.query },
        body: ctx.request.body as unknown,
      });
      const reply = await spec.handler(ctx, input);
      for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value);
      ctx.status = reply.status ?? 200;
      if (reply.body !== undefined) ctx.body = reply.body;
    });
    for (const layer of router.stack.slice(stackSize)) specOfLayer.set(layer, spec);
  }
}

/**
 * Typed helper so route files read as a table. The spec keeps its literal type (schemas included), so the
 * typed test client (test/helpers/client.ts) derives request and response types from the same schemas.
 */
export function route<const S extends RouteSpec>(spec: S): S {
  return spec;
}
