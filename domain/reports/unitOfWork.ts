import type { Knex } from 'knex';
import { transact, type TransactOptions, type UnitOfWork } from '../../db/transaction';

/**
 * The one way the reports domain reaches PostgreSQL: every query runs in a transaction that acts for
 * `companyId`. With row-level security (issue 11, db/unitOfWork.ts) these two functions are where the
 * acting company is set (`withCompany`, and `transact` under `actingAs`); nothing else in the domain
 * needs to change.
 */
export function inCompany<T>(
  knex: Knex,
  _companyId: string,
  fn: (trx: Knex.Transaction) => PromiseLike<T>,
): Promise<T> {
  return knex.transaction(async (trx) => await fn(trx));
}

/** A change and its outbox events in one transaction, acting for `companyId`. */
export function transactInCompany<T>(
  knex: Knex,
  _companyId: string,
  work: (uow: UnitOfWork) => Promise<T>,
  options: TransactOptions = {},
): Promise<T> {
  return transact(knex, work, options);
}
