/**
 * Access rules of the identity capability: which people, keys and company rows an actor may see or change.
 * A row of another company, or a key an employee may not see, is "not found", never "forbidden".
 * Every read starts from `Model.scoped(actor.companyId, trx)` (db/models/base.ts); the lookups that happen
 * before the company is known (sign-in by address, API-key lookup) run under their named system tasks
 * (authentication.ts, signIn.ts).
 */
import type { Knex } from 'knex';
import type { QueryBuilderType } from 'objection';
import { ConflictError, NotFoundError } from '../../common/errors';
import { ApiKey, Company, Person } from '../../db/models';
import type { PlanName } from '../plans/plans';
import type { Role, Scope } from './scopes';

/** Who acts: the part of the API's principal (api/context.ts) the identity domain reads. */
export interface Actor {
  kind: 'session' | 'key';
  companyId: string;
  personId: string;
  role: Role;
  /** session: the session (refresh-token family) id */
  sessionId?: string;
  apiKeyId?: string | null;
}

/** Where a query runs: the unit of work's transaction, or the connection pool for a read. */
export type Db = Knex | Knex.Transaction;

export type PersonStatus = 'not_activated' | 'active' | 'disabled';

export interface PersonRow {
  id: string;
  companyId: string;
  email: string;
  name: string;
  role: Role;
  status: PersonStatus;
  createdAt: Date;
}

export interface ApiKeyRow {
  id: string;
  name: string;
  scopes: Scope[];
  identifier: string;
  personId: string;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

export interface CompanyRow {
  id: string;
  name: string;
  status: string;
  plan: PlanName | null;
  createdAt: Date;
}

/** The actor's company's people (a query, to be ordered and paged by the caller). */
export function peopleOf(actor: Pick<Actor, 'companyId'>, db: Db): QueryBuilderType<Person> {
  return Person.scoped(actor.companyId, db);
}

/** One person of the actor's company, locked for a change (404 otherwise). */
export async function personToChange(actor: Actor, trx: Knex.Transaction, id: string): Promise<PersonRow> {
  const person = (await peopleOf(actor, trx).where({ id }).forUpdate().first()) as PersonRow | undefined;
  if (!person) throw new NotFoundError('person not found');
  return person;
}

/** Locks the actor's company row: people-limit checks and last-admin checks are serialised per company. */
export async function lockCompany(
  actor: Pick<Actor, 'companyId'>,
  trx: Knex.Transaction,
): Promise<CompanyRow> {
  return (await Company.scoped(actor.companyId, trx).forUpdate().first()) as CompanyRow;
}

/** The company must keep at least one active admin (409): call it with the company locked. */
export async function ensureAnotherActiveAdmin(
  actor: Pick<Actor, 'companyId'>,
  trx: Knex.Transaction,
  exceptId: string,
): Promise<void> {
  const row = (await peopleOf(actor, trx)
    .where({ role: 'admin', status: 'active' })
    .whereNot({ id: exceptId })
    .count({ n: '*' })
    .first()) as unknown as { n: string };
  if (Number(row.n) === 0) throw new ConflictError('the company needs at least one active admin');
}

/** The live API keys the actor may see: an admin the company's, an employee their own. */
export function apiKeysVisibleTo(actor: Actor, db: Db): QueryBuilderType<ApiKey> {
  const q = ApiKey.scoped(actor.companyId, db);
  if (actor.role !== 'admin') void q.where({ personId: actor.personId });
  return q;
}
