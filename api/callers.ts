import type { PlanName } from '../common/plans';
import { constantTimeEqual, deriveKey, fingerprint } from '../common/secrets';
import { isApiKeyToken, parseKey } from './auth/apiKeys';
import { sessionKeys, verifyAccessToken, type SessionKeys } from './auth/sessions';
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
function keysFor(ctx: AppContext) {
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

export async function identifyCaller(ctx: AppContext): Promise<CallerIdentity> {
  const match = /^Bearer ([^\s]+)$/i.exec(ctx.get('Authorization'));
  if (!match) return ANONYMOUS;
  const token = match[1];

  if (!isApiKeyToken(token)) {
    const claims = await verifyAccessToken(keysFor(ctx).session, token);
    return claims ? { kind: 'session', personId: claims.personId, companyId: claims.companyId } : ANONYMOUS;
  }

  const parsed = parseKey(token);
  if (!parsed) return ANONYMOUS;
  const row = (await ctx.deps
    .knex('apiKeys as k')
    .join('companies as c', 'c.id', 'k.companyId')
    .where('k.identifier', parsed.identifier)
    .whereNull('k.revokedAt')
    .first('k.companyId', 'k.secretFingerprint', 'c.plan')) as
    { companyId: string; secretFingerprint: string; plan: PlanName | null } | undefined;
  if (!row || !constantTimeEqual(fingerprint(keysFor(ctx).apiKey, token), row.secretFingerprint)) {
    return ANONYMOUS;
  }
  return { kind: 'key', companyId: row.companyId, plan: row.plan };
}
