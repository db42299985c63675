/**
 * How a route handler calls the domain: the domain's dependencies with the request's logger, and units of
 * work bound to the request (its correlation id on audit entries and events; under row-level security, the
 * acting principal). Domain functions never see the Koa context itself.
 */
import { transact, type UnitOfWork } from '../db/transaction';
import type { AppContext } from './context';

/** The app's dependencies, with the request's logger (which carries the correlation id). */
export function domainDeps(ctx: AppContext) {
  return { ...ctx.deps, logger: ctx.state.log };
}

/** Runs `work` in one unit of work of this request. */
export function inUnitOfWork<T>(ctx: AppContext, work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
  return transact(ctx.deps.knex, work, { correlationId: ctx.state.correlationId, log: ctx.state.log });
}

/** Opens units of work of this request, for commands that do slow work before their transaction. */
export function unitsOfWork(ctx: AppContext) {
  return <T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> => inUnitOfWork(ctx, work);
}
