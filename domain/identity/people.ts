/**
 * People of a company, managed by its admins: invite within the plan's limit on people, list, change the
 * role or disable / re-enable (disabling ends every session), remove. The company keeps at least one active
 * admin; the company row lock serialises the limit and last-admin checks.
 */
import { randomUUID } from 'node:crypto';
import type { QueryBuilderType } from 'objection';
import type { Person } from '../../db/models';
import { ConflictError } from '../../common/errors';
import { planLimits } from '../plans/plans';
import type { UnitOfWork } from '../../db/transaction';
import { recordAudit } from '../audit/record';
import {
  ensureAnotherActiveAdmin,
  lockCompany,
  peopleOf,
  personToChange,
  type Actor,
  type Db,
  type PersonRow,
} from './access';
import { EMAIL_TAKEN, isEmailTaken } from './accounts';
import type { IdentityDeps } from './deps';
import { invitationMail, mailAfterCommit } from './mails';
import { issueOneTimeToken, voidOneTimeTokens } from './oneTimeTokens';
import type { Role } from './scopes';
import { endSessionsOf } from './sessions';

export interface Invitation {
  email: string;
  role: Role;
  name?: string;
}

/**
 * Invites a person (not activated until they accept): 409 at the plan's limit on people (a company without
 * a plan yet gets the Free limits) or for an address already registered. The mail goes after commit.
 */
export async function invitePerson(
  deps: IdentityDeps,
  actor: Actor,
  uow: UnitOfWork,
  input: Invitation,
): Promise<{ person: PersonRow; expiresAt: Date }> {
  const { trx } = uow;
  try {
    const company = await lockCompany(actor, trx);
    const limit = planLimits(company.plan ?? 'free').people;
    if (limit !== null) {
      const row = (await peopleOf(actor, trx).count({ n: '*' }).first()) as unknown as { n: string };
      if (Number(row.n) >= limit) {
        throw new ConflictError(`the ${company.plan ?? 'free'} plan allows ${limit} people`);
      }
    }
    const [person] = (await trx('people')
      .insert({
        id: randomUUID(),
        companyId: actor.companyId,
        email: input.email.trim(),
        name: input.name ?? '',
        role: input.role,
        status: 'not_activated',
      })
      .returning('*')) as PersonRow[];
    const issued = await issueOneTimeToken(trx, deps.config.secretKey, {
      companyId: actor.companyId,
      personId: person.id,
      purpose: 'invitation',
      data: { invitedBy: actor.personId },
    });
    await recordAudit(trx, {
      companyId: actor.companyId,
      personId: actor.personId,
      action: 'person.invited',
      resourceType: 'person',
      resourceId: person.id,
      correlationId: uow.correlationId,
      details: { role: input.role },
    });
    mailAfterCommit(deps, uow, invitationMail(deps.config, person.email, issued.token, company.name), {
      wait: true,
    });
    return { person, expiresAt: issued.expiresAt };
  } catch (err) {
    if (isEmailTaken(err)) throw new ConflictError(EMAIL_TAKEN);
    throw err;
  }
}

/** The company's people, oldest first (a query, to be paged by the caller). */
export function peopleList(actor: Actor, db: Db): QueryBuilderType<Person> {
  return peopleOf(actor, db).orderBy([
    { column: 'createdAt', order: 'asc' },
    { column: 'id', order: 'asc' },
  ]);
}

export interface PersonChange {
  role?: Role;
  status?: 'active' | 'disabled';
}

/**
 * Changes a person's role or status. 409 when the person has not activated yet (status) or when the change
 * would leave the company without an active admin.
 */
export async function updatePerson(
  actor: Actor,
  uow: UnitOfWork,
  id: string,
  change: PersonChange,
): Promise<PersonRow> {
  const { trx } = uow;
  await lockCompany(actor, trx);
  const person = await personToChange(actor, trx, id);
  if (change.status && person.status === 'not_activated') {
    throw new ConflictError('the person has not activated the account yet');
  }
  const losesAdmin =
    person.role === 'admin' &&
    person.status === 'active' &&
    (change.role === 'employee' || change.status === 'disabled');
  if (losesAdmin) await ensureAnotherActiveAdmin(actor, trx, person.id);
  const [row] = (await trx('people')
    .where({ id: person.id })
    .update({ ...change, updatedAt: trx.fn.now() })
    .returning('*')) as PersonRow[];
  // Disabling ends every session (audited one by one, like removal), so re-enabling brings none back:
  // the old access tokens name an ended session, the old refresh tokens belong to one. Password reset
  // links mailed before stop working too. API keys are not revoked: they follow the person's status
  // (refused while disabled) and are revoked one by one by an admin.
  let endedSessions: number | undefined;
  if (change.status === 'disabled' && person.status !== 'disabled') {
    const ended = await endSessionsOf(trx, person.id, 'person_disabled', {
      companyId: actor.companyId,
      personId: actor.personId,
      correlationId: uow.correlationId,
    });
    endedSessions = ended.length;
    await voidOneTimeTokens(trx, person.id, 'password_reset');
  }
  await recordAudit(trx, {
    companyId: actor.companyId,
    personId: actor.personId,
    action: 'person.updated',
    resourceType: 'person',
    resourceId: person.id,
    correlationId: uow.correlationId,
    details: {
      from: { role: person.role, status: person.status },
      to: change,
      ...(endedSessions === undefined ? {} : { endedSessions }),
    },
  });
  return row;
}

/** Removes a person: their sessions end and their API keys stop working (409 for the last active admin). */
export async function removePerson(actor: Actor, uow: UnitOfWork, id: string): Promise<void> {
  const { trx } = uow;
  await lockCompany(actor, trx);
  const person = await personToChange(actor, trx, id);
  if (person.role === 'admin' && person.status === 'active') {
    await ensureAnotherActiveAdmin(actor, trx, person.id);
  }
  // ended (and audited) before the person row goes, which takes the sessions with it
  await endSessionsOf(trx, person.id, 'person_removed', {
    companyId: actor.companyId,
    personId: actor.personId,
    correlationId: uow.correlationId,
  });
  await trx('people').where({ id: person.id }).delete();
  await recordAudit(trx, {
    companyId: actor.companyId,
    personId: actor.personId,
    action: 'person.removed',
    resourceType: 'person',
    resourceId: person.id,
    correlationId: uow.correlationId,
    details: { email: person.email, role: person.role },
  });
}
