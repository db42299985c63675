import { randomInt } from 'node:crypto';
import { testEnv } from './env';

export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * A fresh client address (10.0.0.0/8) for each call: the test app trusts one
 * proxy hop, so per-address budgets and buckets do not leak from one test into another. Tests of those
 * limits pass their own fixed `ip`.
 */
export function randomClientAddress(): string {
  // 24 random bits (10.0.0.0/8): a suite's thousands of calls, each from its own address unless a test names
  // one, must not land on a test's address within a rate-limit minute (with the 17 bits of 198.18.0.0/15 they
  // did now and then: a counter one lower than expected)
  const n = randomInt(0, 2 ** 24);
  return `10.${n >> 16}.${(n >> 8) & 255}.${n & 255}`;
}

/** Calls the API over real HTTP on loopback, as a client would. */
export async function call(
  method: string,
  path: string,
  options: {
    json?: unknown;
    raw?: string | Buffer;
    headers?: Record<string, string>;
    token?: string;
    /** the client address the test app sees (X-Forwarded-For); a fresh one per call when absent */
    ip?: string;
    /** another server of this run (e.g. a second API process) */
    baseUrl?: string;
  } = {},
): Promise<HttpResponse> {
  const headers: Record<string, string> = {
    'x-forwarded-for': options.ip ?? randomClientAddress(),
    ...(options.headers ?? {}),
  };
  let body: string | Buffer | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  } else if (options.raw !== undefined) {
    body = options.raw;
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch((options.baseUrl ?? testEnv().baseUrl) + path, { method, headers, body });
  return readResponse(res);
}

/** A fetch answer as tests read it: status, headers, the raw text and the JSON body when there is one. */
export async function readResponse(res: Response): Promise<HttpResponse> {
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Asserts the spec's error body and returns it. */
export function expectErrorBody(res: HttpResponse, status: number): { message: string | string[] } {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
  const b = res.body as Record<string, unknown>;
  const keys = Object.keys(b).sort().join(',');
  if (
    ![
      'correlationId,message,statusCode,timestamp',
      'checks,correlationId,message,statusCode,timestamp',
    ].includes(keys)
  )
    throw new Error(`unexpected error body fields: ${keys}`);
  if (b.statusCode !== status) throw new Error(`statusCode ${String(b.statusCode)} != ${status}`);
  if (b.correlationId !== res.headers.get('x-request-id'))
    throw new Error('correlationId differs from X-Request-Id');
  const ts = String(b.timestamp);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(ts) || Number.isNaN(Date.parse(ts)))
    throw new Error(`timestamp is not ISO 8601: ${ts}`);
  return b as { message: string | string[] };
}
