/**
 * What the identity commands take besides the acting principal: their dependencies, and the unit of work
 * they run in. A command whose every step belongs in one transaction takes the `UnitOfWork`; a command that
 * must do slow or outside work before it (password hashing, the identity provider, the sign-in limiter)
 * takes `RunUnitOfWork` and opens the unit of work itself once that work is done, so no transaction waits on
 * argon2 or the network.
 */
import type { Knex } from 'knex';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { Mailer } from '../../common/mailer';
import type { UnitOfWork } from '../../db/transaction';

export interface IdentityDeps {
  knex: Knex;
  config: Config;
  mailer: Mailer;
  /** the caller's logger (the API passes the request's, which carries the correlation id) */
  logger: Logger;
}

/**
 * Opens one unit of work (db/transaction.ts `transact`) bound to the caller: its correlation id (stamped on
 * audit entries and events) and, under row-level security, who acts.
 */
export type RunUnitOfWork = <T>(work: (uow: UnitOfWork) => Promise<T>) => Promise<T>;
