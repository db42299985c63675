/**
 * A typed client for tests, built from the route table itself: the path, the body, the query and the
 * answer of every call are typed from the same ajv schemas that validate requests and feed the OpenAPI
 * document (json-schema-to-ts). Tests call the API as a real client would, over HTTP on loopback.
 *
 *   const api = apiClient({ token });
 *   const res = await api.patch('/subscriptions/me', { body: { plan: 'basic' } });
 *   res.body.filesLimit; // number | null
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { RouteTable } from '../../api/routes';
import type { RouteSpec } from '../../api/routing';
import { call, type HttpResponse } from './http';

/** The service's routes, plus the test-only routes of an app a test builds (`apiClient<typeof extra>`). */
type Route<Extra extends readonly RouteSpec[]> = RouteTable[number] | Extra[number];
type Method = RouteSpec['method'];
export type PathOf<R, M extends Method> = Extract<R, { method: M }> extends { path: infer P } ? P : never;
type RouteOf<R, M extends Method, P> = Extract<R, { method: M; path: P }>;

type Infer<S, Input extends boolean = false> = S extends JSONSchema
  ? Input extends true
    ? FromSchema<S, { keepDefaultedPropertiesOptional: true }>
    : FromSchema<S>
  : unknown;

type BodyOf<R> = R extends { body: infer S } ? Infer<S, true> : never;
type QueryOf<R> = R extends { query: infer S } ? Partial<Infer<S, true>> : never;
type ParamsOf<P> = P extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string } & ParamsOf<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? { [K in Name]: string }
    : never;

type SuccessCode = 200 | 201 | 202 | 204;
/** The answer body of a route's documented 2xx responses. */
export type SuccessOf<R> = R extends { responses: infer Res }
  ? {
      [K in keyof Res]: K extends SuccessCode
        ? Res[K] extends { schema: infer S }
          ? Infer<S>
          : undefined
        : never;
    }[keyof Res]
  : unknown;

export interface CallOptions<R, P> {
  body?: BodyOf<R>;
  query?: QueryOf<R>;
  params?: ParamsOf<P>;
  headers?: Record<string, string>;
  /** Idempotency-Key header */
  idempotencyKey?: string;
}

export interface ClientOptions {
  /** session access token or API key */
  token?: string;
  /** the client address the test app sees; a fresh one per call when absent */
  ip?: string;
  baseUrl?: string;
}

/** The success body is typed; on an error status `body` holds the error body instead. */
export type ApiResponse<T> = HttpResponse<T>;

function fillPath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    if (!(name in params)) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(params[name]);
  });
}

/** One call of the typed client, made through `call()` with the client's address, token and server. */
function send(
  client: ClientOptions,
  method: string,
  path: string,
  options: {
    body?: unknown;
    query?: Record<string, unknown>;
    params?: Record<string, string>;
    headers?: Record<string, string>;
    idempotencyKey?: string;
  },
): Promise<HttpResponse> {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(options.query ?? {})) {
    if (v !== undefined) search.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v as string));
  }
  const query = search.size > 0 ? `?${search.toString()}` : '';
  return call(method.toUpperCase(), fillPath(path, options.params) + query, {
    json: options.body,
    headers: {
      ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
      ...(options.headers ?? {}),
    },
    token: client.token,
    ip: client.ip,
    baseUrl: client.baseUrl,
  });
}

export function apiClient<Extra extends readonly RouteSpec[] = readonly []>(client: ClientOptions = {}) {
  type R = Route<Extra>;
  const verb =
    <M extends Method>(method: M) =>
    <P extends PathOf<R, M> & string>(
      path: P,
      options: CallOptions<RouteOf<R, M, P>, P> = {},
    ): Promise<ApiResponse<SuccessOf<RouteOf<R, M, P>>>> =>
      send(client, method, path, options as Parameters<typeof send>[3]);
  return {
    get: verb('get'),
    post: verb('post'),
    patch: verb('patch'),
    put: verb('put'),
    delete: verb('delete'),
    /** the same client with other options (another token, address or server) */
    with: (more: ClientOptions) => apiClient<Extra>({ ...client, ...more }),
  };
}
export type ApiClient = ReturnType<typeof apiClient>;
