import { randomBytes, randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Knex } from 'knex';
import { withholdClientAddress } from '../../common/requestContext';
import { deriveKey, fingerprint } from '../../common/secrets';
import { UnauthorizedError } from '../../common/errors';
import { recordAudit } from '../audit/record';
import { refuseInactive } from './accountState';
import type { RunUnitOfWork } from './deps';

export const ACCESS_TOKEN_SECONDS = 900;
/** Sign-in's one answer for a wrong password and an unknown address (rule 2). */
export const INVALID_CREDENTIALS = 'invalid email or password';
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
const ISSUER = 'data-service';
const AUDIENCE = 'data-service-api';

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

export interface AccessClaims {
  personId: string;
  companyId: string;
  sessionId: string;
  /**
   * a demo session (claim `dmo`): every demo visitor is the demo company's one visitor person, so the request
   * budget counts demo sessions per client address, not per person (api/middlewares/rateLimit.ts)
   */
  demo?: boolean;
}

export interface SessionKeys {
  access: Uint8Array;
  refresh: Buffer;
}

export function sessionKeys(secretKey: string): SessionKeys {
  return { access: deriveKey(secretKey, 'access-token'), refresh: deriveKey(secretKey, 'refresh-token') };
}

async function signAccessToken(keys: SessionKeys, claims: AccessClaims): Promise<string> {
  return new SignJWT({ cid: claims.companyId, sid: claims.sessionId, ...(claims.demo ? { dmo: true } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.personId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setJti(randomUUID())
    .setExpirationTime(`${ACCESS_TOKEN_SECONDS}s`)
    .sign(keys.access);
}

/** The claims of a valid, unexpired access token, or null for anything else. */
export async function verifyAccessToken(keys: SessionKeys, token: string): Promise<AccessClaims | null> {
  try {
    const { payload } = await jwtVerify(token, keys.access, {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['HS256'],
    });
    const { sub, cid, sid, dmo } = payload as { sub?: unknown; cid?: unknown; sid?: unknown; dmo?: unknown };
    if (typeof sub !== 'string' || typeof cid !== 'string' || typeof sid !== 'string') return null;
    return { personId: sub, companyId: cid, sessionId: sid, ...(dmo === true ? { demo: true } : {}) };
  } catch {
    return null;
  }
}

async function newRefreshToken(trx: Knex.Transaction, keys: SessionKeys, sessionId: string): Promise<string> {
  const token = `rt_${randomBytes(32).toString('base64url')}`;
  await trx('refreshTokens').insert({
    id: randomUUID(),
    sessionId,
    tokenFingerprint: fingerprint(keys.refresh, token),
    expiresAt: new Date(Date.now() + REFRESH_TOKEN_SECONDS * 1000),
  });
  return token;
}

export interface PersonRef {
  id: string;
  companyId: string;
}

/**
 * Begins a session for the person (sign-in, accepted invitation, Google, demo) and returns its first pair.
 *
 * The person is read again under a share lock first, in the session's own transaction: disabling, removal
 * and a password reset lock the person's row and end every open session in one transaction, so a sign-in
 * that checked the person (or the password) just before such a change either begins its session before it
 * (and the change ends it) or waits for it and is refused here — a session can never outlive the change
 * that was meant to end it (issue 10). `passwordHash`: the hash the password was verified against; a reset
 * in between answers 401 like a wrong password.
 */
export async function startSession(
  trx: Knex.Transaction,
  keys: SessionKeys,
  person: PersonRef,
  options: {
    method: 'password' | 'invitation' | 'google' | 'demo';
    demo?: boolean;
    correlationId?: string;
    passwordHash?: string | null;
  },
): Promise<TokenPair> {
  const current = (await trx('people as p')
    .join('companies as c', 'c.id', 'p.companyId')
    .where('p.id', person.id)
    .forShare('p')
    .first('p.status', 'p.passwordHash', 'c.status as companyStatus')) as
    { status: string; passwordHash: string | null; companyStatus: string } | undefined;
  if (!current) throw new UnauthorizedError(INVALID_CREDENTIALS);
  if (options.passwordHash !== undefined && current.passwordHash !== options.passwordHash)
    throw new UnauthorizedError(INVALID_CREDENTIALS);
  refuseInactive(current);
  const sessionId = randomUUID();
  await trx('sessions').insert({
    id: sessionId,
    companyId: person.companyId,
    personId: person.id,
    demo: options.demo ?? false,
    method: options.method,
  });
  await recordAudit(trx, {
    companyId: person.companyId,
    personId: person.id,
    action: 'session.started',
    resourceType: 'session',
    resourceId: sessionId,
    correlationId: options.correlationId,
    details: { method: options.method },
  });
  const refreshToken = await newRefreshToken(trx, keys, sessionId);
  const accessToken = await signAccessToken(keys, {
    personId: person.id,
    companyId: person.companyId,
    sessionId,
    demo: options.demo ?? false,
  });
  return { accessToken, refreshToken, tokenType: 'Bearer', expiresIn: ACCESS_TOKEN_SECONDS };
}

export type RefreshOutcome =
  | { ok: true; pair: TokenPair; personId: string; companyId: string; sessionId: string }
  | {
      ok: false;
      reason: 'unknown' | 'expired' | 'session_ended' | 'reused' | 'person_inactive' | 'company_suspended';
    };

/**
 * Rotates a refresh token. A token that was already rotated is a sign of theft: the whole session ends, so
 * both the thief's and the owner's later tokens stop working.
 */
export async function rotateRefreshToken(
  run: RunUnitOfWork,
  keys: SessionKeys,
  token: string,
): Promise<RefreshOutcome> {
  return run(async ({ trx, correlationId }) => {
    const tokenFingerprint = fingerprint(keys.refresh, token);
    // The session's row is locked before the token's row. Removing, disabling or signing out the person
    // updates the session first (endSessionsOf) and, for a removal, deletes its tokens after (by cascade):
    // taken in the other order, a refresh holding its token and waiting to add the next one to the session
    // deadlocked with a removal holding the session and waiting for the token. Now a change under way is
    // waited for (and its end read below), or waits for this rotation. NO KEY UPDATE, not SHARE: two
    // presentations of a reused token each end the session, which two share locks could deadlock.
    const owner = (await trx('refreshTokens').where({ tokenFingerprint }).first('sessionId')) as
      { sessionId: string } | undefined;
    if (owner) await trx('sessions').where({ id: owner.sessionId }).forNoKeyUpdate().first('id');
    const row = (await trx('refreshTokens as rt')
      .join('sessions as s', 's.id', 'rt.sessionId')
      .join('people as p', 'p.id', 's.personId')
      .join('companies as c', 'c.id', 's.companyId')
      .where('rt.tokenFingerprint', tokenFingerprint)
      .select(
        'rt.id',
        'rt.expiresAt',
        'rt.rotatedAt',
        's.id as sessionId',
        's.personId',
        's.companyId',
        's.endedAt',
        's.demo',
        'p.status as personStatus',
        'c.status as companyStatus',
      )
      .forUpdate('rt')
      .first()) as
      | {
          id: string;
          expiresAt: Date;
          rotatedAt: Date | null;
          sessionId: string;
          personId: string;
          companyId: string;
          endedAt: Date | null;
          demo: boolean;
          personStatus: string;
          companyStatus: string;
        }
      | undefined;
    if (!row) return { ok: false, reason: 'unknown' } as const;
    // a demo visitor's records carry no client address (every visitor reads the demo company's audit log)
    if (row.demo) withholdClientAddress();
    if (row.endedAt) return { ok: false, reason: 'session_ended' } as const;
    if (row.rotatedAt) {
      await endSession(trx, row.sessionId, 'refresh_token_reused', {
        companyId: row.companyId,
        personId: row.personId,
        correlationId,
      });
      await recordAudit(trx, {
        companyId: row.companyId,
        personId: row.personId,
        action: 'session.refresh_token_reused',
        resourceType: 'session',
        resourceId: row.sessionId,
        outcome: 'denied',
        correlationId,
        details: { sessionEnded: true },
      });
      return { ok: false, reason: 'reused' } as const;
    }
    if (row.expiresAt.getTime() <= Date.now()) return { ok: false, reason: 'expired' } as const;
    if (row.personStatus !== 'active') return { ok: false, reason: 'person_inactive' } as const;
    if (row.companyStatus !== 'active') return { ok: false, reason: 'company_suspended' } as const;
    await trx('refreshTokens').where({ id: row.id }).update({ rotatedAt: trx.fn.now() });
    const refreshToken = await newRefreshToken(trx, keys, row.sessionId);
    const accessToken = await signAccessToken(keys, {
      personId: row.personId,
      companyId: row.companyId,
      sessionId: row.sessionId,
      demo: row.demo,
    });
    return {
      ok: true,
      pair: { accessToken, refreshToken, tokenType: 'Bearer', expiresIn: ACCESS_TOKEN_SECONDS },
      personId: row.personId,
      companyId: row.companyId,
      sessionId: row.sessionId,
    } as const;
  });
}

/** The end reason of a session ended by logout: its access tokens run out on their own clock (sessionCaller). */
export const LOGOUT = 'logout';

/** Who ended a session, for its audit record. */
export interface SessionEndAudit {
  companyId: string;
  /** the person who acted */
  personId: string | null;
  correlationId?: string;
}

/** Ends the open sessions chosen by `where` and writes one audit record for each; answers their ids. */
async function endSessionsWhere(
  trx: Knex.Transaction,
  where: Record<string, string>,
  reason: string,
  audit: SessionEndAudit,
): Promise<string[]> {
  const ended = (await trx('sessions')
    .where(where)
    .whereNull('endedAt')
    .update({ endedAt: trx.fn.now(), endReason: reason })
    .returning('id')) as Array<{ id: string }>;
  for (const { id } of ended) {
    await recordAudit(trx, {
      companyId: audit.companyId,
      personId: audit.personId,
      action: 'session.ended',
      resourceType: 'session',
      resourceId: id,
      correlationId: audit.correlationId,
      details: { reason },
    });
  }
  return ended.map((s) => s.id);
}

/**
 * Ends a session at once: its refresh tokens stop working; its access tokens are refused from the next request,
 * except after a logout (`LOGOUT`), whose access tokens run out on their own clock as the spec says.
 */
export async function endSession(
  trx: Knex.Transaction,
  sessionId: string,
  reason: string,
  audit: SessionEndAudit,
): Promise<boolean> {
  return (await endSessionsWhere(trx, { id: sessionId }, reason, audit)).length > 0;
}

/**
 * Ends every open session of the person (password reset, disabling, removal), one audit record per ended
 * session. Call it in the transaction that changes the person's row (which locks it), so that a sign-in in
 * flight cannot begin a session after it (see `startSession`).
 */
export async function endSessionsOf(
  trx: Knex.Transaction,
  personId: string,
  reason: string,
  audit: SessionEndAudit,
): Promise<string[]> {
  return endSessionsWhere(trx, { personId }, reason, audit);
}

/** The session a refresh token belongs to when it is a session of `personId` (for logout), or null. */
export async function ownSessionOfRefreshToken(
  trx: Knex.Transaction,
  keys: SessionKeys,
  token: string,
  personId: string,
): Promise<string | null> {
  const row = (await trx('refreshTokens as rt')
    .join('sessions as s', 's.id', 'rt.sessionId')
    .where({ 'rt.tokenFingerprint': fingerprint(keys.refresh, token), 's.personId': personId })
    .select('rt.sessionId')
    .first()) as { sessionId: string } | undefined;
  return row?.sessionId ?? null;
}
