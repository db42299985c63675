/**
 * The OpenAPI 3.1 document, generated from the route table: the same ajv schemas that validate requests
 * describe them here, and every route's `access` becomes its security requirement (session token, API key
 * with its scope) and `x-roles`. Served at GET /openapi.json and rendered at GET /docs.
 */
import { BUCKETS, type BucketName } from '../domain/plans/plans';
import { IDEMPOTENCY_TTL_SECONDS } from './middlewares/idempotency';
import { cursorMetaSchema, pageMetaSchema } from './lists';
import type { JsonSchema, RouteSpec } from './routing';

export const errorBodySchema = {
  type: 'object',
  required: ['statusCode', 'message', 'correlationId', 'timestamp'],
  properties: {
    statusCode: { type: 'integer', description: 'the HTTP status' },
    message: {
      oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
      description: 'a list when the request has several mistakes',
    },
    correlationId: { type: 'string', description: 'id of the request, also sent as X-Request-Id' },
    timestamp: { type: 'string', format: 'date-time' },
  },
} as const;

/** Shared schemas: wherever the route table uses one of these objects, the document has a $ref. */
const NAMED_SCHEMAS = new Map<object, string>([
  [errorBodySchema, 'ErrorBody'],
  [pageMetaSchema, 'PageMeta'],
  [cursorMetaSchema, 'CursorMeta'],
]);

/** Gives a schema object a name in components.schemas (call at module load of the route file). */
export function namedSchema<S extends object>(name: string, schema: S): S {
  NAMED_SCHEMAS.set(schema, name);
  return schema;
}

type Doc = Record<string, unknown>;

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/XRateLimitLimit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/XRateLimitRemaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/XRateLimitReset' },
  'X-Request-Id': { $ref: '#/components/headers/XRequestId' },
};

/** The header every 429 carries (api/middlewares/rateLimit.ts, domain/identity/signInFailures.ts). */
const RETRY_AFTER_HEADER = {
  'Retry-After': {
    description: 'seconds to wait; equals X-RateLimit-Reset',
    schema: { type: 'integer', minimum: 1 },
  },
};

const STANDARD_ERRORS: Record<number, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'a missing, unknown or out-of-range field or query parameter' },
  401: { name: 'Unauthorized', description: 'no token, or a bad, expired or revoked one' },
  402: {
    name: 'PaymentRequired',
    description: 'the company has not chosen a plan, or a plan limit stops the work',
  },
  403: {
    name: 'Forbidden',
    description: 'role too low, key lacks the scope, company suspended or read-only demo',
  },
  404: { name: 'NotFound', description: 'does not exist or the caller may not see it' },
  409: { name: 'Conflict', description: 'clash with the current state' },
  413: { name: 'PayloadTooLarge', description: 'the JSON body is over the size limit (after decompression)' },
  415: {
    name: 'UnsupportedMediaType',
    description: 'the body is not JSON, or its Content-Encoding is not gzip, deflate, br or identity',
  },
  422: { name: 'Unprocessable', description: 'the request cannot be processed as sent' },
  429: { name: 'TooManyRequests', description: 'request budget or bucket used for this minute' },
  500: { name: 'ServerError', description: 'unexpected failure; the correlationId identifies the request' },
};

function replaceNamed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => replaceNamed(v));
  if (value && typeof value === 'object') {
    const name = NAMED_SCHEMAS.get(value);
    if (name) return { $ref: `#/components/schemas/${name}` };
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = replaceNamed(v);
    return out;
  }
  return value;
}

/** Koa's `/api-keys/:id` as OpenAPI's `/api-keys/{id}`. */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operationId(spec: RouteSpec): string {
  if (spec.operationId) return spec.operationId;
  const words = spec.path
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [spec.method, ...words].map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
}

function parameters(spec: RouteSpec): Doc[] {
  const out: Doc[] = [];
  const pathParams = [...spec.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  const paramProps = (spec.params?.properties ?? {}) as Record<string, JsonSchema>;
  for (const name of pathParams) {
    out.push({
      name,
      in: 'path',
      required: true,
      schema: replaceNamed(paramProps[name] ?? { type: 'string' }),
    });
  }
  const queryProps = (spec.query?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((spec.query?.required ?? []) as string[]);
  for (const [name, schema] of Object.entries(queryProps)) {
    const { description, ...rest } = schema as { description?: string };
    out.push({
      name,
      in: 'query',
      required: required.has(name),
      ...(description ? { description } : {}),
      schema: replaceNamed(rest),
    });
  }
  if (spec.idempotent) out.push({ $ref: '#/components/parameters/IdempotencyKey' });
  return out;
}

function security(spec: RouteSpec): Doc[] {
  if (spec.access.public) return [];
  const out: Doc[] = [{ session: [] }];
  if (spec.access.keyScope) out.push({ apiKey: [spec.access.keyScope] });
  return out;
}

function responses(spec: RouteSpec): Doc {
  const out: Doc = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    const code = Number(status);
    const contentTypes =
      typeof r.contentType === 'string' ? [r.contentType] : (r.contentType ?? ['application/json']);
    const schema = r.schema ?? (code >= 400 ? errorBodySchema : undefined);
    out[status] = {
      description: r.description,
      // a 429 a route declares itself carries Retry-After as the shared one does (spec "Errors", 429)
      headers: code === 429 ? { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER_HEADER } : RATE_LIMIT_HEADERS,
      ...(schema
        ? { content: Object.fromEntries(contentTypes.map((t) => [t, { schema: replaceNamed(schema) }])) }
        : {}),
    };
  }
  const standard = new Set([400, 429, 500]);
  if (!spec.access.public) [401, 403].forEach((c) => standard.add(c));
  if (spec.needsPlan) standard.add(402);
  if (spec.idempotent) [409, 422].forEach((c) => standard.add(c));
  // every POST, PUT and PATCH goes through the JSON body parser (multipart routes document their own)
  if (spec.body || (spec.method !== 'get' && spec.method !== 'delete' && !spec.multipart))
    [413, 415].forEach((c) => standard.add(c));
  for (const code of standard) {
    if (!(String(code) in out))
      out[String(code)] = { $ref: `#/components/responses/${STANDARD_ERRORS[code].name}` };
  }
  return out;
}

function operation(spec: RouteSpec): Doc {
  const access = spec.access;
  // api/middlewares/rateLimit.ts chooseBudget: a public route's bucket is per address whatever token is sent
  const per = access.public ? 'client address' : 'company';
  const limit = spec.bucket
    ? { bucket: spec.bucket, perMinute: BUCKETS[spec.bucket as BucketName], per }
    : { bucket: 'main budget' };
  const description = [
    access.public
      ? 'Public.'
      : `Session of: ${access.roles.join(', ')}.` +
        (access.keyScope ? ` API keys with scope \`${access.keyScope}\`.` : ' API keys are refused.'),
    spec.bucket
      ? `Counted in the separate \`${spec.bucket}\` bucket (${BUCKETS[spec.bucket]} per minute per ${per}` +
        (access.public ? ', whatever token is attached).' : ').')
      : '',
    spec.needsPlan ? 'Needs a chosen plan (402 otherwise).' : '',
    spec.idempotent ? 'Honours Idempotency-Key.' : '',
  ]
    .filter(Boolean)
    .join(' ');
  const op: Doc = {
    operationId: operationId(spec),
    summary: spec.summary,
    description,
    tags: [spec.tag],
    security: security(spec),
    parameters: parameters(spec),
  };
  if (!access.public) op['x-roles'] = [...access.roles];
  op['x-rate-limit'] = limit;
  if (spec.needsPlan) op['x-needs-plan'] = true;
  if (spec.idempotent) op['x-idempotent'] = true;
  if (spec.body) {
    op.requestBody = { required: true, content: { 'application/json': { schema: replaceNamed(spec.body) } } };
  }
  if (spec.multipart) {
    op.requestBody = {
      required: true,
      description: spec.multipart.description,
      content: { 'multipart/form-data': { schema: spec.multipart.schema } },
    };
  }
  op.responses = responses(spec);
  return op;
}

function errorResponse(description: string, extraHeaders: Doc = {}): Doc {
  return {
    description,
    headers: { ...RATE_LIMIT_HEADERS, ...extraHeaders },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
  };
}

export function buildOpenApi(routes: readonly RouteSpec[], info: { version?: string } = {}): Doc {
  const paths: Record<string, Doc> = {};
  for (const spec of routes) {
    const p = openApiPath(spec.path);
    paths[p] ??= {};
    paths[p][spec.method] = operation(spec);
  }
  const schemas: Doc = {};
  for (const [schema, name] of NAMED_SCHEMAS) {
    // a named schema's own body is written out once, with nested named schemas as $refs
    const inner = replaceNamed({ ...(schema as Record<string, unknown>) });
    schemas[name] = inner;
  }
  const componentResponses: Doc = {};
  for (const [code, { name, description }] of Object.entries(STANDARD_ERRORS)) {
    componentResponses[name] =
      code === '429' ? errorResponse(description, RETRY_AFTER_HEADER) : errorResponse(description);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Data Analysis Service API',
      version: info.version ?? '1.0.0',
      description:
        'Multi-tenant data-analysis service. Every request carries `Authorization: Bearer <token>`: a ' +
        'session access token (a JWT from POST /auth/login) or an API key (`svc_live_...`). Every answer ' +
        'carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (seconds until the window ' +
        'resets). Failures use the ErrorBody schema.\n\n' +
        'Rules for every operation: a NUL character (`\\u0000`) in any string of a body, query or path ' +
        'is 400 naming where it is; integer query and path parameters are plain decimal integers within the ' +
        'bounds their schema states (`Infinity`, `1e400`, `0x10` are 400). A JSON body may be sent with ' +
        'Content-Encoding gzip, deflate or br; one that does not decompress is 400, another coding 415. A path ' +
        'answers every method it does not have with 405, the error body and an `Allow` header (OPTIONS: 204 ' +
        'with `Allow`); an unknown path is 404 whatever the method.',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(routes.map((r) => r.tag))].sort().map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        session: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'Session access token from POST /auth/login or /auth/refresh; lives 900 seconds.',
        },
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'svc_live_<identifier>_<secret>',
          description:
            'API key. The scopes listed on an operation are the key scope it needs; an operation that ' +
            'lists no apiKey requirement refuses keys.',
        },
      },
      schemas,
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            `Makes a create safe to retry: the same key with the same request replays the first successful ` +
            `answer; with a different request it gives 422; while the first is running it gives 409. Keys are ` +
            `scoped to the company (to the client address on a public route such as POST /auth/register) and ` +
            `kept ${IDEMPOTENCY_TTL_SECONDS / 3600} hours. An empty or invalid key ` +
            `gives 400. Uploads are compared by form fields, file name and the sha256 of the content.`,
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
        },
      },
      headers: {
        XRateLimitLimit: {
          description: 'the budget (or bucket) this request was counted against, per minute',
          schema: { type: 'integer' },
        },
        XRateLimitRemaining: {
          description: 'requests left in the current window',
          schema: { type: 'integer', minimum: 0 },
        },
        XRateLimitReset: {
          description: 'seconds until the current window resets (delta seconds, like Retry-After)',
          schema: { type: 'integer', minimum: 1 },
        },
        XRequestId: { description: 'the correlation id of the request', schema: { type: 'string' } },
      },
      responses: componentResponses,
    },
  };
}

const cache = new WeakMap<readonly RouteSpec[], Doc>();
/** The document for a route table, built once. */
export function openApiFor(routes: readonly RouteSpec[]): Doc {
  let doc = cache.get(routes);
  if (!doc) {
    doc = buildOpenApi(routes);
    cache.set(routes, doc);
  }
  return doc;
}

/**
 * Routes the router serves without an operation in the document, and operations without a route
 * (as "METHOD /path" in OpenAPI syntax). Both lists are empty when the document is complete.
 */
export function compareWithRouter(
  router: { stack: ReadonlyArray<{ methods: string[]; path: string | RegExp }> },
  doc: Doc,
): { undocumented: string[]; unrouted: string[] } {
  const served = new Set<string>();
  for (const layer of router.stack) {
    for (const method of layer.methods) {
      if (method === 'HEAD' || typeof layer.path !== 'string') continue;
      served.add(`${method} ${openApiPath(layer.path)}`);
    }
  }
  const documented = new Set<string>();
  for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${p}`);
  }
  return {
    undocumented: [...served].filter((x) => !documented.has(x)).sort(),
    unrouted: [...documented].filter((x) => !served.has(x)).sort(),
  };
}
