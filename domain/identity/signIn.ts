/**
 * Sign-in with a password, refresh of a token pair, sign-out. Sessions themselves (tokens, rotation, ends)
 * are in sessions.ts; Google sign-in in google.ts.
 */
import { ForbiddenError, UnauthorizedError } from '../../common/errors';
import type { UnitOfWork } from '../../db/transaction';
import { recordAudit } from '../audit/record';
import type { Actor } from './access';
import { personByEmail, refuseInactive } from './accountState';
import type { IdentityDeps, RunUnitOfWork } from './deps';
import { keysOf } from './keys';
import { verifyPassword } from './passwords';
import {
  endSession,
  INVALID_CREDENTIALS,
  LOGOUT,
  ownSessionOfRefreshToken,
  rotateRefreshToken,
  startSession,
  type TokenPair,
} from './sessions';
import { SignInAttempt } from './signInFailures';

/** Rule 7: one message for every reason a request or a refresh token is not accepted. */
export const UNAUTHENTICATED = 'invalid or missing credentials';

/** The audit entry of a refused sign-in of a known person (outcome failure; never the password tried). */
function auditRefusedSignIn(
  run: RunUnitOfWork,
  person: { id: string; companyId: string },
  reason: 'wrong_password' | 'account_cannot_sign_in',
): Promise<void> {
  return run((uow) =>
    recordAudit(uow.trx, {
      companyId: person.companyId,
      personId: person.id,
      action: 'session.sign_in_failed',
      resourceType: 'person',
      resourceId: person.id,
      outcome: 'failure',
      correlationId: uow.correlationId,
      details: { reason, method: 'password' },
    }),
  );
}

/**
 * Signs a person in with e-mail and password: 401 for a wrong password and an unknown address alike, 403
 * for an account that may not sign in, 429 once the account's failed sign-ins reach the limit.
 */
export async function signIn(
  deps: IdentityDeps,
  run: RunUnitOfWork,
  input: { email: string; password: string },
): Promise<TokenPair> {
  // the per-account failure limit, taken before the password is checked (signInFailures.ts)
  const attempt = await SignInAttempt.begin(deps, input.email);
  const person = await personByEmail(deps.knex, input.email);
  // one password verification whether or not the address exists: no timing difference worth measuring
  const ok = await verifyPassword(person?.passwordHash, input.password);
  if (!person || !ok) {
    // an unknown address belongs to no company: only a known person's failures are in an audit log
    if (person) await auditRefusedSignIn(run, person, 'wrong_password');
    throw new UnauthorizedError(INVALID_CREDENTIALS);
  }
  await attempt.succeeded();
  try {
    refuseInactive(person);
  } catch (err) {
    await auditRefusedSignIn(run, person, 'account_cannot_sign_in');
    throw err;
  }
  return run((uow) =>
    startSession(uow.trx, keysOf(deps.config).session, person, {
      method: 'password',
      correlationId: uow.correlationId,
      // a reset between the verification and the session: 401 like a wrong password
      passwordHash: person.passwordHash,
    }),
  );
}

/** A new pair for a refresh token (rotation); 403 for a suspended company, 401 for anything else. */
export async function refreshSession(
  deps: Pick<IdentityDeps, 'config'>,
  run: RunUnitOfWork,
  refreshToken: string,
): Promise<TokenPair> {
  const outcome = await rotateRefreshToken(run, keysOf(deps.config).session, refreshToken);
  if (outcome.ok) return outcome.pair;
  if (outcome.reason === 'company_suspended') throw new ForbiddenError('the company is suspended');
  throw new UnauthorizedError(UNAUTHENTICATED);
}

/**
 * Ends the actor's session at once, and the refresh token's session too when it belongs to the same person
 * (answered the same when it had ended already): their refresh tokens are refused from now on; access tokens
 * already issued run out on their own clock (spec, States: Session).
 */
export async function signOut(
  deps: Pick<IdentityDeps, 'config'>,
  actor: Actor,
  uow: UnitOfWork,
  refreshToken: string,
): Promise<void> {
  const { trx } = uow;
  const sessions = new Set<string>(actor.sessionId ? [actor.sessionId] : []);
  const owned = await ownSessionOfRefreshToken(
    trx,
    keysOf(deps.config).session,
    refreshToken,
    actor.personId,
  );
  if (owned) sessions.add(owned);
  for (const id of sessions) {
    await endSession(trx, id, LOGOUT, {
      companyId: actor.companyId,
      personId: actor.personId,
      correlationId: uow.correlationId,
    });
  }
}
