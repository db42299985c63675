import type { Knex } from 'knex';
import { transact, type TransactOptions, type UnitOfWork } from '../../db/transaction';
import { withCompany } from '../../db/unitOfWork';

/**
 * The one way the reports domain reaches PostgreSQL: every query runs in a transaction that acts for
 * `companyId` under row-level security (db/unitOfWork.ts): `withCompany`, and `transact` acting for it.
 */
export function inCompany<T>(
  knex: Knex,
  companyId: string,
  fn: (trx: Knex.Transaction) => PromiseLike<T>,
): Promise<T> {
  return withCompany(knex, companyId, async (trx) => await fn(trx));
}

/** A change and its outbox events in one transaction, acting for `companyId`. */
export function transactInCompany<T>(
  knex: Knex,
  companyId: string,
  work: (uow: UnitOfWork) => Promise<T>,
  options: TransactOptions = {},
): Promise<T> {
  if (!companyId) throw new Error('transactInCompany without a company');
  return transact(knex, work, { ...options, acting: { companyId } });
}
