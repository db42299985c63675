import { createHmac } from 'node:crypto';
import type { Next } from 'koa';
import type { Knex } from 'knex';
import { raw } from 'objection';
import { deriveKey, openBox, sealBox } from '../../common/secrets';
import { AppError, BadRequestError, UnprocessableError } from '../../common/errors';
import type { AppContext } from '../context';
import type { RouteSpec } from '../routing';
import { fingerprintMultipart } from './formFingerprint';
import { asSystem, withCompany } from '../../db/unitOfWork';
import { IdempotencyRecord } from '../../db/models';

/** How long a key is remembered after its first request. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
/**
 * A claim not renewed for this long (its process died) may be taken over by a retry. A request still being
 * served renews its claim every third of it, however long it runs (a large upload on a slow link).
 */
export const IDEMPOTENCY_LEASE_SECONDS = 300;
/** Expired records removed per claim (lazy cleanup; no scheduler needed). */
const CLEANUP_BATCH = 100;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
/** Response headers that belong to the answer and are replayed with it. */
const REPLAYED_HEADERS = ['location', 'content-type'];
const DIFFERENT_REQUEST = 'Idempotency-Key was already used for a different request';

class IdempotencyInProgressError extends AppError {
  constructor() {
    super(409, 'a request with this Idempotency-Key is still being processed; retry shortly', {
      'Retry-After': '1',
    });
  }
}

type StoredRow = Pick<
  IdempotencyRecord,
  'fingerprint' | 'state' | 'responseStatus' | 'responseHeaders' | 'responseBody'
>;

/**
 * The records of the caller: its company's through `scoped()`; on a public route (no company yet) those of
 * the named system task 'idempotency-public', which `inUnit` below runs them under — the record is found by
 * its scope (`address:<ip>`) and key.
 */
function recordsOf(companyId: string | null, trx: Knex.Transaction) {
  return companyId ? IdempotencyRecord.scoped(companyId, trx) : IdempotencyRecord.query(trx);
}

/** JSON with object keys sorted, so {a,b} and {b,a} are the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * What makes two requests "the same": method, path, query, body, and who sent them. The caller is part of
 * it so that, within one company, a second person reusing a key gets 422 instead of someone else's answer.
 * An HMAC keyed from SECRET_KEY, not a bare hash: a body can hold a password (POST /auth/register), and a
 * bare SHA-256 of it, kept 24 hours, could be guessed offline far faster than the argon2id hash.
 * A body its handler streams (a multipart upload) is not read here, which would defeat streaming: it is
 * represented by its media type, and its own fingerprint (fields, file names, content sha256) is added
 * once the handler has read it (`ctx.state.bodyFingerprint`); see `idempotency` below.
 */
export function requestFingerprint(ctx: AppContext, streamed = false): string {
  const auth = ctx.state.auth;
  const who = auth ? (auth.apiKeyId ? `key:${auth.apiKeyId}` : `person:${auth.personId}`) : 'public';
  const body = streamed ? { streamed: ctx.request.type } : (ctx.request.body ?? null);
  return createHmac('sha256', deriveKey(ctx.deps.config.secretKey, 'idempotent-request'))
    .update(canonical([ctx.method, ctx.path, ctx.querystring, who, body]))
    .digest('hex');
}

/** The stored fingerprint of a streamed request: its head and its body's fingerprint. */
const SEPARATOR = '.';

function bodyText(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return null;
  return JSON.stringify(body);
}

/**
 * Idempotency-Key on routes that create something (`idempotent: true`). The key is claimed atomically
 * (INSERT .. ON CONFLICT), so of parallel duplicates exactly one does the work; the others get 409 while
 * it runs and the first answer (status and exact body) once it is done. The same key with a different
 * request gives 422. Only successful answers are remembered: an error releases the key, because the work
 * was not done (its transaction rolled back), so a retry with the same key may do it.
 * Keys are scoped to the caller's company (to the client address on public routes) and kept 24 hours.
 * A header that is present must be a valid key: empty, over 255 characters or with other than visible
 * ASCII gives 400, like the OpenAPI document's pattern says.
 *
 * Streamed bodies (multipart uploads) are fingerprinted in two steps: the claim holds the head (method,
 * path, query, caller); once the handler has streamed the body, the record keeps head and body
 * fingerprint. A later request with the key whose head matches a finished record reads its own body only
 * to fingerprint it (nothing is stored), then replays the answer or gives 422.
 */
export function idempotency(spec: RouteSpec, options: { leaseSeconds?: number } = {}) {
  const lease = options.leaseSeconds ?? IDEMPOTENCY_LEASE_SECONDS;
  if (!spec.idempotent) {
    return async (_ctx: AppContext, next: Next) => {
      await next();
    };
  }

  return async (ctx: AppContext, next: Next) => {
    const header = ctx.headers['idempotency-key'];
    if (header === undefined) {
      await next();
      return;
    }
    const key = Array.isArray(header) ? header.join(', ') : header;
    if (!KEY_FORMAT.test(key)) {
      throw new BadRequestError('Idempotency-Key must be 1 to 255 visible ASCII characters');
    }
    const { knex } = ctx.deps;
    const companyId = ctx.state.auth?.companyId ?? null;
    const scope = companyId ? `company:${companyId}` : `address:${ctx.state.clientIp}`;
    const streamed = Boolean(spec.multipart);
    const fingerprint = requestFingerprint(ctx, streamed);

    // Records act for the caller's company; those of public routes (keyed by address) have none and are
    // kept by a named system task. Expired records of any company are swept by another named task.
    const inUnit = <T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> =>
      companyId ? withCompany(knex, companyId, fn) : asSystem(knex, 'idempotency-public', fn);
    await sweepExpired(knex, scope, key);

    for (let attempt = 0; attempt < 3; attempt++) {
      // Claim the key, or take over a record that expired or whose claim was abandoned.
      const claimed: { rows: unknown[] } = await inUnit((trx) =>
        trx.raw(
          `insert into idempotency_keys
           (scope, key, company_id, fingerprint, state, locked_until, created_at, expires_at)
         values (:scope, :key, :companyId, :fingerprint, 'running',
                 now() + make_interval(secs => :lease), now(), now() + make_interval(secs => :ttl))
         on conflict (scope, key) do update set
           company_id = excluded.company_id, fingerprint = excluded.fingerprint, state = 'running',
           response_status = null, response_headers = null, response_body = null,
           locked_until = excluded.locked_until, created_at = excluded.created_at,
           expires_at = excluded.expires_at
         where idempotency_keys.expires_at <= now()
            or (idempotency_keys.state = 'running' and idempotency_keys.locked_until <= now())
         returning key`,
          {
            scope,
            key,
            companyId,
            fingerprint,
            lease,
            ttl: IDEMPOTENCY_TTL_SECONDS,
          },
        ),
      );
      if (claimed.rows.length === 1) {
        await runClaimed(ctx, next, (fn) => inUnit(async (trx) => await fn(recordsOf(companyId, trx))), {
          scope,
          key,
          fingerprint,
          streamed,
          lease,
        });
        return;
      }

      const existing: StoredRow | undefined = await inUnit(
        async (trx) =>
          await recordsOf(companyId, trx)
            .select('fingerprint', 'state', 'responseStatus', 'responseHeaders', 'responseBody')
            .where({ scope, key })
            .first(),
      );
      if (!existing) continue; // released between our two statements: claim again
      const [head, storedBody] = existing.fingerprint.split(SEPARATOR);
      if (head !== fingerprint) {
        if (streamed) ctx.set('Connection', 'close'); // the body is left unread
        throw new UnprocessableError(DIFFERENT_REQUEST);
      }
      if (existing.state === 'running') {
        if (streamed) ctx.set('Connection', 'close');
        throw new IdempotencyInProgressError();
      }
      if (streamed && (await fingerprintMultipart(ctx.req)) !== storedBody) {
        throw new UnprocessableError(DIFFERENT_REQUEST);
      }
      replay(ctx, existing, scope, key);
      return;
    }
    throw new IdempotencyInProgressError();
  };
}

/** A few expired records of any company or address (never the one being claimed): a named system task. */
async function sweepExpired(knex: Knex, scope: string, key: string): Promise<void> {
  await asSystem(knex, 'idempotency-sweep', (trx) =>
    trx.raw(
      `delete from idempotency_keys where ctid = any(array(
         select ctid from idempotency_keys
         where expires_at < now() and not (scope = :scope and key = :key) limit ${CLEANUP_BATCH}))`,
      { scope, key },
    ),
  );
}

async function runClaimed(
  ctx: AppContext,
  next: Next,
  records: <T>(fn: (query: ReturnType<typeof recordsOf>) => PromiseLike<T>) => Promise<T>,
  claim: { scope: string; key: string; fingerprint: string; streamed: boolean; lease: number },
): Promise<void> {
  const { scope, key, fingerprint, streamed, lease } = claim;
  const running = { scope, key, fingerprint, state: 'running' };
  const release = () => records((q) => q.where(running).delete());
  // the claim is renewed while the request runs, so a retry gets 409 however long the first one takes; a
  // renewal that fails is logged (the claim then lasts until its lease ends, as it would without renewal)
  const renewal = setInterval(
    () => {
      records((q) =>
        q.where(running).patch({ lockedUntil: raw('now() + make_interval(secs => ?)', [lease]) }),
      ).catch((e: unknown) => ctx.state.log.warn({ err: e }, 'idempotency claim renewal failed'));
    },
    (lease * 1000) / 3,
  );
  renewal.unref();
  try {
    await next();
  } catch (err) {
    clearInterval(renewal);
    await release().catch((e: unknown) => ctx.state.log.warn({ err: e }, 'idempotency release failed'));
    throw err;
  }
  clearInterval(renewal);
  const body = bodyText(ctx.body);
  const bodyFingerprint = ctx.state.bodyFingerprint;
  if (
    ctx.status < 200 ||
    ctx.status >= 300 ||
    (ctx.body != null && body === null) ||
    (streamed && bodyFingerprint === undefined)
  ) {
    await release();
    return;
  }
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = ctx.response.get(name);
    if (value) headers[name] = String(value);
  }
  try {
    await records((q) =>
      q.where({ scope, key, fingerprint }).patch({
        fingerprint: streamed ? `${fingerprint}${SEPARATOR}${bodyFingerprint}` : fingerprint,
        state: 'done',
        responseStatus: ctx.status,
        responseHeaders: headers,
        // answers can carry secrets shown once (an API key, a webhook signing secret): kept encrypted
        responseBody: body === null ? null : sealResponse(ctx, scope, key, body),
        lockedUntil: null,
      }),
    );
  } catch (err) {
    // the work is done: the answer stays the handler's (an error in its place would invite a retry that, once
    // the claim's lease is over, does the work again); the claim stays `running`, a retry gets 409 till then
    ctx.state.log.error({ err }, 'the answer of an idempotent request could not be remembered');
  }
}

function responseKey(ctx: AppContext): Buffer {
  return deriveKey(ctx.deps.config.secretKey, 'idempotent-response');
}

function sealResponse(ctx: AppContext, scope: string, key: string, body: string): string {
  return sealBox(responseKey(ctx), body, `${scope}\n${key}`).toString('base64');
}

function replay(ctx: AppContext, row: StoredRow, scope: string, key: string): void {
  ctx.status = row.responseStatus ?? 200;
  if (row.responseBody !== null) {
    ctx.body = openBox(responseKey(ctx), Buffer.from(row.responseBody, 'base64'), `${scope}\n${key}`);
  }
  for (const [name, value] of Object.entries(row.responseHeaders ?? {})) ctx.set(name, value);
  ctx.set('Idempotent-Replayed', 'true');
}
