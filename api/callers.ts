import type { PlanName } from '../common/plans';
import { constantTimeEqual, deriveKey, fingerprint } from '../common/secrets';
import type { Role, Scope } from './routing';
import { isApiKeyToken, parseKey } from './auth/apiKeys';
import { sessionKeys, verifyAccessToken, type AccessClaims, type SessionKeys } from './auth/sessions';
import type { AppContext } from './context';

/**
 * Who is calling, as far as the request budget needs to know, found before authentication proper and
 * without trusting anything unverified: a session token whose signature and expiry check out is counted
 * for its person; an API key that matches a live key (identifier found, secret's fingerprint equal) is
 * counted for its company. Anything else is counted per address, so a forged token cannot spend someone
 * else's budget. Authentication (api/middlewares/authenticate.ts) still decides whether the request may go
 * on: a person disabled a second ago is still counted here, and then refused there.
 */
export type CallerIdentity =
  | { kind: 'key'; companyId: string; plan: PlanName | null }
  | { kind: 'session'; personId: string; companyId: string }
  | { kind: 'anonymous' };

const ANONYMOUS: CallerIdentity = { kind: 'anonymous' };

const keysCache = new WeakMap<object, { session: SessionKeys; apiKey: Buffer }>();
/** The per-purpose keys derived from SECRET_KEY, once per configuration. */
export function keysFor(ctx: AppContext) {
  let keys = keysCache.get(ctx.deps.config);
  if (!keys) {
    keys = {
      session: sessionKeys(ctx.deps.config.secretKey),
      apiKey: deriveKey(ctx.deps.config.secretKey, 'api-key'),
    };
    keysCache.set(ctx.deps.config, keys);
  }
  return keys;
}

/** An API key with its owner and company, as read for this request. */
export interface ApiKeyRow {
  apiKeyId: string;
  secretFingerprint: string;
  scopes: Scope[];
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  personId: string;
  companyId: string;
  role: Role;
  personStatus: string;
  companyStatus: string;
  plan: PlanName | null;
}

const keyRowsOfRequest = new WeakMap<object, Map<string, Promise<ApiKeyRow | undefined>>>();

/**
 * The key named by `identifier`, read once per request: the budget's caller identification and
 * authentication share the one query. The memo belongs to the request (ctx) and dies with it, so every
 * request still reads the key, its owner and the company afresh.
 */
export function apiKeyRowFor(ctx: AppContext, identifier: string): Promise<ApiKeyRow | undefined> {
  let rows = keyRowsOfRequest.get(ctx);
  if (!rows) {
    rows = new Map();
    keyRowsOfRequest.set(ctx, rows);
  }
  let row = rows.get(identifier);
  if (!row) {
    // a knex builder runs again at every await: keep one promise of its one run
    row = Promise.resolve(
      ctx.deps
        .knex('apiKeys as k')
        .join('people as p', 'p.id', 'k.personId')
        .join('companies as c', 'c.id', 'k.companyId')
        .where('k.identifier', identifier)
        .first(
          'k.id as apiKeyId',
          'k.secretFingerprint',
          'k.scopes',
          'k.revokedAt',
          'k.lastUsedAt',
          'p.id as personId',
          'p.companyId',
          'p.role',
          'p.status as personStatus',
          'c.status as companyStatus',
          'c.plan',
        ),
    ) as Promise<ApiKeyRow | undefined>;
    rows.set(identifier, row);
  }
  return row;
}

const claimsOfRequest = new WeakMap<object, Promise<AccessClaims | null>>();

/**
 * The claims of the request's session token, verified once per request (the budget's caller
 * identification and authentication share the verification; it dies with the request).
 */
export function accessClaimsFor(ctx: AppContext, token: string): Promise<AccessClaims | null> {
  let claims = claimsOfRequest.get(ctx);
  if (!claims) {
    claims = verifyAccessToken(keysFor(ctx).session, token);
    claimsOfRequest.set(ctx, claims);
  }
  return claims;
}

export async function identifyCaller(ctx: AppContext): Promise<CallerIdentity> {
  const match = /^Bearer ([^\s]+)$/i.exec(ctx.get('Authorization'));
  if (!match) return ANONYMOUS;
  const token = match[1];

  if (!isApiKeyToken(token)) {
    const claims = await accessClaimsFor(ctx, token);
    return claims ? { kind: 'session', personId: claims.personId, companyId: claims.companyId } : ANONYMOUS;
  }

  const parsed = parseKey(token);
  if (!parsed) return ANONYMOUS;
  const row = await apiKeyRowFor(ctx, parsed.identifier);
  if (
    !row ||
    row.revokedAt ||
    !constantTimeEqual(fingerprint(keysFor(ctx).apiKey, token), row.secretFingerprint)
  ) {
    return ANONYMOUS;
  }
  return { kind: 'key', companyId: row.companyId, plan: row.plan };
}
