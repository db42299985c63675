import type { PlanName } from '../domain/plans/plans';
import { verifyApiKey, type ApiKeyRow } from '../domain/identity/authentication';
import { isApiKeyToken } from '../domain/identity/keyFormat';
import { keysOf } from '../domain/identity/keys';
import { verifyAccessToken, type AccessClaims } from '../domain/identity/sessions';
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
  | { kind: 'session'; personId: string; companyId: string; demo?: boolean }
  | { kind: 'anonymous' };

const ANONYMOUS: CallerIdentity = { kind: 'anonymous' };

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(ctx: AppContext): string | null {
  const match = /^Bearer ([^\s]+)$/i.exec(ctx.get('Authorization'));
  return match ? match[1] : null;
}

const verifiedKeysOfRequest = new WeakMap<object, Map<string, Promise<ApiKeyRow | null>>>();

/**
 * `verifyApiKey` (domain/identity/authentication.ts), once per request and token: the budget's caller
 * identification and authentication share the one query and the one verification. The memo belongs to the request (ctx) and dies with it, so every
 * request still reads the key, its owner and the company afresh.
 */
export function verifiedKeyFor(ctx: AppContext, token: string): Promise<ApiKeyRow | null> {
  let keys = verifiedKeysOfRequest.get(ctx);
  if (!keys) {
    keys = new Map();
    verifiedKeysOfRequest.set(ctx, keys);
  }
  let key = keys.get(token);
  if (!key) {
    key = verifyApiKey(ctx.deps, token);
    keys.set(token, key);
  }
  return key;
}

const claimsOfRequest = new WeakMap<object, Map<string, Promise<AccessClaims | null>>>();

/**
 * The claims of a session token, verified once per request and token (the budget's caller identification
 * and authentication share the verification; it dies with the request).
 */
export function accessClaimsFor(ctx: AppContext, token: string): Promise<AccessClaims | null> {
  let byToken = claimsOfRequest.get(ctx);
  if (!byToken) {
    byToken = new Map();
    claimsOfRequest.set(ctx, byToken);
  }
  let claims = byToken.get(token);
  if (!claims) {
    claims = verifyAccessToken(keysOf(ctx.deps.config).session, token);
    byToken.set(token, claims);
  }
  return claims;
}

export async function identifyCaller(ctx: AppContext): Promise<CallerIdentity> {
  const token = bearerToken(ctx);
  if (!token) return ANONYMOUS;

  if (!isApiKeyToken(token)) {
    const claims = await accessClaimsFor(ctx, token);
    return claims
      ? { kind: 'session', personId: claims.personId, companyId: claims.companyId, demo: claims.demo }
      : ANONYMOUS;
  }

  const key = await verifiedKeyFor(ctx, token);
  return key ? { kind: 'key', companyId: key.companyId, plan: key.plan } : ANONYMOUS;
}
