/**
 * Account commands of people who are not signed in: register a company with its first admin, activate,
 * resend the activation, forgot and reset the password, accept an invitation. Each looks the person up by
 * address or by an e-mailed one-time token, writes its audit entries in its unit of work and mails only
 * after commit.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../common/config';
import { ConflictError, ForbiddenError, UnauthorizedError } from '../../common/errors';
import type { Mail } from '../../common/mailer';
import { isUniqueViolation } from '../../db/errors';
import type { UnitOfWork } from '../../db/transaction';
import { recordAudit } from '../audit/record';
import { notify } from '../notifications/notify';
import { personByEmail } from './accountState';
import type { IdentityDeps, RunUnitOfWork } from './deps';
import { keysOf } from './keys';
import { activationMail, mailAfterCommit, passwordResetMail } from './mails';
import { consumeOneTimeToken, issueOneTimeToken } from './oneTimeTokens';
import { hashPassword } from './passwords';
import { endSessionsOf, startSession, type TokenPair } from './sessions';

/** Answer for every invalid, used or expired e-mailed token (one message, like rule 7). */
export const INVALID_TOKEN = 'invalid or expired token';
export const EMAIL_TAKEN = 'an account with this address already exists';

/** The e-mail address is registered already (the unique index on lower(email)). */
export const isEmailTaken = (err: unknown) => isUniqueViolation(err, 'people_email_unique');

export interface Registration {
  companyName: string;
  name: string;
  email: string;
  password: string;
}

/** A new company with its first admin (not activated); the activation mail goes after commit (awaited). */
export async function register(
  deps: IdentityDeps,
  run: RunUnitOfWork,
  input: Registration,
): Promise<{ companyId: string; personId: string; status: 'not_activated' }> {
  const passwordHash = await hashPassword(input.password);
  const companyId = randomUUID();
  const personId = randomUUID();
  const email = input.email.trim();
  try {
    await run(async (uow) => {
      const { trx } = uow;
      await trx('companies').insert({ id: companyId, name: input.companyName, status: 'active', plan: null });
      await trx('people').insert({
        id: personId,
        companyId,
        email,
        name: input.name,
        role: 'admin',
        status: 'not_activated',
        passwordHash,
      });
      await recordAudit(trx, {
        companyId,
        personId,
        action: 'company.registered',
        resourceType: 'company',
        resourceId: companyId,
        correlationId: uow.correlationId,
      });
      const activation = await issueOneTimeToken(trx, deps.config.secretKey, {
        companyId,
        personId,
        purpose: 'activation',
      });
      mailAfterCommit(deps, uow, activationMail(deps.config, email, activation.token), { wait: true });
    });
  } catch (err) {
    if (isEmailTaken(err)) throw new ConflictError(EMAIL_TAKEN);
    throw err;
  }
  return { companyId, personId, status: 'not_activated' };
}

/** Uses an e-mailed token of `purpose` once: its person and company, or 401 for an invalid, used or expired one. */
async function useToken(
  deps: IdentityDeps,
  uow: UnitOfWork,
  purpose: 'activation' | 'password_reset' | 'invitation',
  token: string,
): Promise<{ personId: string; companyId: string; data: Record<string, unknown> }> {
  const used = await consumeOneTimeToken(uow.trx, deps.config.secretKey, purpose, token);
  if (!used?.personId) throw new UnauthorizedError(INVALID_TOKEN);
  return { personId: used.personId, companyId: used.companyId, data: used.data ?? {} };
}

/** Changes the token's person while they still have `status`; 401 like an invalid token otherwise. */
async function changeOwnAccount(
  uow: UnitOfWork,
  person: { personId: string },
  status: 'not_activated' | 'active',
  change: Record<string, unknown>,
): Promise<void> {
  const updated = await uow
    .trx('people')
    .where({ id: person.personId, status })
    .update({ ...change, updatedAt: uow.trx.fn.now() });
  if (updated === 0) throw new UnauthorizedError(INVALID_TOKEN);
}

/** The audit entry of a change a person made to their own account with an e-mailed token. */
async function auditOwnChange(
  uow: UnitOfWork,
  person: { personId: string; companyId: string },
  action: string,
): Promise<void> {
  await recordAudit(uow.trx, {
    companyId: person.companyId,
    personId: person.personId,
    action,
    resourceType: 'person',
    resourceId: person.personId,
    correlationId: uow.correlationId,
  });
}

/** Activates the account the mailed token belongs to (401 for an invalid, used or expired token). */
export async function activate(deps: IdentityDeps, uow: UnitOfWork, token: string): Promise<void> {
  const used = await useToken(deps, uow, 'activation', token);
  await changeOwnAccount(uow, used, 'not_activated', { status: 'active' });
  await auditOwnChange(uow, used, 'person.activated');
}

/**
 * Issues a one-time token for the person and mails it after commit without waiting for the mail server
 * (answer time must not tell which addresses are registered).
 */
async function mailNewToken(
  deps: IdentityDeps,
  uow: UnitOfWork,
  person: { id: string; companyId: string; email: string },
  purpose: 'activation' | 'password_reset',
  mail: (config: Config, to: string, token: string) => Mail,
): Promise<void> {
  const issued = await issueOneTimeToken(uow.trx, deps.config.secretKey, {
    companyId: person.companyId,
    personId: person.id,
    purpose,
  });
  await auditOwnChange(
    uow,
    { personId: person.id, companyId: person.companyId },
    purpose === 'activation' ? 'person.activation_mail_sent' : 'person.password_reset_requested',
  );
  mailAfterCommit(deps, uow, mail(deps.config, person.email, issued.token), { wait: false });
}

/**
 * The person a mailed token is asked for, locked until the token is issued: a change of the person in flight
 * (disabling, which voids reset links; another request for a token, which voids this one) is waited for and
 * its status read, so no token is issued that the change did not see.
 */
function personAskingForToken(uow: UnitOfWork, email: string) {
  return personByEmail(uow.trx, email, { forUpdate: true });
}

/** Mails a new activation token to a registered, not yet activated address; silent otherwise. */
export async function resendActivation(deps: IdentityDeps, uow: UnitOfWork, email: string): Promise<void> {
  const person = await personAskingForToken(uow, email);
  if (person?.status !== 'not_activated') return;
  // an invited person has no activation: they accept the invitation instead
  const invited: unknown = await uow
    .trx('oneTimeTokens')
    .where({ personId: person.id, purpose: 'invitation' })
    .first();
  if (!invited) await mailNewToken(deps, uow, person, 'activation', activationMail);
}

/** Mails a password reset token to an active account's address; silent otherwise. */
export async function forgotPassword(deps: IdentityDeps, uow: UnitOfWork, email: string): Promise<void> {
  const person = await personAskingForToken(uow, email);
  if (person && person.status === 'active') {
    await mailNewToken(deps, uow, person, 'password_reset', passwordResetMail);
  }
}

/** Sets a new password with the mailed token; every session of the person ends. */
export async function resetPassword(
  deps: IdentityDeps,
  run: RunUnitOfWork,
  input: { token: string; password: string },
): Promise<void> {
  const passwordHash = await hashPassword(input.password);
  await run(async (uow) => {
    const used = await useToken(deps, uow, 'password_reset', input.token);
    await changeOwnAccount(uow, used, 'active', { passwordHash });
    await endSessionsOf(uow.trx, used.personId, 'password_reset', {
      companyId: used.companyId,
      personId: used.personId,
      correlationId: uow.correlationId,
    });
    await auditOwnChange(uow, used, 'person.password_reset');
  });
}

/** Accepts an invitation: the person's password is set, the account activated and a session begins. */
export async function acceptInvitation(
  deps: IdentityDeps,
  run: RunUnitOfWork,
  input: { token: string; password: string },
): Promise<TokenPair> {
  const passwordHash = await hashPassword(input.password);
  return run(async (uow) => {
    const { trx } = uow;
    const used = await useToken(deps, uow, 'invitation', input.token);
    // public route: the system task 'account-tokens' acts; the company is the one-time token's
    const company = (await trx('companies').where({ id: used.companyId }).first()) as { status: string };
    if (company.status !== 'active') throw new ForbiddenError('the company is not active');
    await changeOwnAccount(uow, used, 'not_activated', { status: 'active', passwordHash });
    await auditOwnChange(uow, used, 'invitation.accepted');
    const invitedBy = typeof used.data.invitedBy === 'string' ? used.data.invitedBy : null;
    await notify(uow, {
      companyId: used.companyId,
      kind: 'invitation.accepted',
      to: { people: [invitedBy] },
      resource: { type: 'person', id: used.personId },
      data: { personId: used.personId },
      cause: `invitation:${used.personId}:accepted`,
    });
    return startSession(
      trx,
      keysOf(deps.config).session,
      { id: used.personId, companyId: used.companyId },
      { method: 'invitation', correlationId: uow.correlationId },
    );
  });
}
