import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { fingerprint } from '../../common/secrets';
import { keysOf } from './keys';

export type OneTimePurpose = 'activation' | 'password_reset' | 'invitation' | 'oauth_exchange';

export const TOKEN_LIFETIME_SECONDS: Record<OneTimePurpose, number> = {
  activation: 48 * 3600,
  password_reset: 3600,
  invitation: 7 * 24 * 3600,
  oauth_exchange: 60,
};

export interface OneTimeTokenRow {
  id: string;
  companyId: string;
  personId: string | null;
  purpose: OneTimePurpose;
  data: Record<string, unknown>;
}

/** Unused tokens of this purpose for the person stop working (marked used). */
export async function voidOneTimeTokens(
  trx: Knex.Transaction,
  personId: string,
  purpose: OneTimePurpose,
): Promise<void> {
  await trx('oneTimeTokens')
    .where({ personId, purpose })
    .whereNull('usedAt')
    .update({ usedAt: trx.fn.now() });
}

/**
 * Issues a single-use token (only its fingerprint is stored). Earlier unused tokens of the same purpose for
 * the same person stop working, so only the newest e-mailed link counts.
 */
export async function issueOneTimeToken(
  trx: Knex.Transaction,
  secretKey: string,
  params: { companyId: string; personId: string; purpose: OneTimePurpose; data?: Record<string, unknown> },
): Promise<{ token: string; expiresAt: Date }> {
  await voidOneTimeTokens(trx, params.personId, params.purpose);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + TOKEN_LIFETIME_SECONDS[params.purpose] * 1000);
  await trx('oneTimeTokens').insert({
    id: randomUUID(),
    companyId: params.companyId,
    personId: params.personId,
    purpose: params.purpose,
    tokenFingerprint: fingerprint(keysOf({ secretKey }).oneTimeToken, token),
    data: JSON.stringify(params.data ?? {}),
    expiresAt,
  });
  return { token, expiresAt };
}

/** Uses a token once: atomically marks it used and returns it, or null when unknown, used or expired. */
export async function consumeOneTimeToken(
  trx: Knex | Knex.Transaction,
  secretKey: string,
  purpose: OneTimePurpose,
  token: string,
): Promise<OneTimeTokenRow | null> {
  const [row] = (await trx('oneTimeTokens')
    .where({ tokenFingerprint: fingerprint(keysOf({ secretKey }).oneTimeToken, token), purpose })
    .whereNull('usedAt')
    .where('expiresAt', '>', trx.fn.now())
    .update({ usedAt: trx.fn.now() })
    .returning(['id', 'companyId', 'personId', 'purpose', 'data'])) as OneTimeTokenRow[];
  return row ?? null;
}
