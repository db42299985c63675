/**
 * Units of work under row-level security (db/rls.ts). Every query of the API and the worker runs in a
 * transaction that first sets who acts, with `set_config(..., true)` (SET LOCAL: it ends with the
 * transaction, so a pooled connection never carries it to the next user) — unless its connection's
 * session-level settings, set when it left the pool (db/knex.ts), already name that actor:
 *
 * - `withCompany(knex, companyId, fn)`: the rows of one company; a query that forgets its `where` still
 *   sees nothing of another company, and an insert or update into another company is refused.
 * - `asSystem(knex, 'outbox-dispatch', fn)`: work that must cross companies, under one of the names of
 *   SYSTEM_TASKS (grep for the name to find every such place).
 * - `unitOfWork(knex, fn)`: whoever acts in the surrounding scope — the request's principal, set by the
 *   authenticate middleware with `actingAs`, or the named system task of a public route. Outside any scope
 *   it sets nothing, and the policies then show no tenant row at all (fails closed).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';
import { systemRoleName } from './rls';

/**
 * Every place that may read or write across companies, by name. Add a name here (and to README's list)
 * before using it.
 */
export const SYSTEM_TASKS = [
  /** API-key lookup by identifier, before the key's company is known (authentication, request budget) */
  'api-key-lookup',
  /** public routes of sign-in and account recovery: lookups by address and by one-time token */
  'sign-in',
  'register',
  'account-tokens',
  'oauth-sign-in',
  /** the demo company: find or create it and its sample data */
  'demo',
  /** Idempotency-Key records of public routes (keyed by client address, no company) */
  'idempotency-public',
  /** deletion of expired Idempotency-Key records, whichever company they belong to */
  'idempotency-sweep',
  /** worker: outbox fan-out and dispatch */
  'outbox-dispatch',
  /** worker: webhook deliveries (store, attempt, batching, redelivery bookkeeping) */
  'webhook-delivery',
  /** worker: deletion of old delivery records */
  'webhook-retention',
  /** worker: orphaned objects, and report and comparison starts that did not happen */
  'file-sweep',
  /** worker and operators: finalising a billing period's invoices for every company, and their documents */
  'billing',
  /** worker: deletion of notifications older than 90 days */
  'notification-retention',
  /** worker: deletion of audit entries older than AUDIT_RETENTION_DAYS (through purge_audit_log only) */
  'audit-retention',
] as const;
export type SystemTask = (typeof SYSTEM_TASKS)[number];

export type Acting =
  { companyId: string; system?: undefined } | { system: SystemTask; companyId?: undefined };

/**
 * The scope of statements that touch no tenant table (the request budget's counters): a connection taken
 * from the pool in it keeps whatever actor it holds, so counting a request costs no extra round trip.
 */
const NO_TENANT_ROWS = Object.freeze({ noTenantRows: true as const });

const scope = new AsyncLocalStorage<Acting | typeof NO_TENANT_ROWS>();

/** Who acts in the current asynchronous scope, if anyone. */
export function currentActing(): Acting | undefined {
  const store = scope.getStore();
  return store && 'noTenantRows' in store ? undefined : store;
}

/** Whether the scope declared that its statements touch no tenant table (`withoutTenantRows`). */
export function touchesNoTenantRows(): boolean {
  const store = scope.getStore();
  return !!store && 'noTenantRows' in store;
}

/**
 * Runs `fn`, whose statements touch no tenant table (only `rate_limit_counters`): their connections are
 * not reset to an actor. Never for anything that reads or writes company rows.
 */
export function withoutTenantRows<T>(fn: () => Promise<T>): Promise<T> {
  return scope.run(NO_TENANT_ROWS, async () => await fn());
}

/** Runs `fn` (e.g. the rest of a request) with `acting` as the scope's actor for every `unitOfWork`. */
export function actingAs<T>(acting: Acting, fn: () => T): T {
  if (acting.companyId === undefined && !SYSTEM_TASKS.includes(acting.system))
    throw new Error('acting without a company or a named system task');
  return scope.run(acting, fn);
}

/**
 * The settings that make a connection act as `acting` (db/rls.ts): the role — the application role, or for
 * a system task its system role, the only one the cross-company policy applies to — the company and the
 * task. `appRole` undefined: a connection that does not switch roles (the owner's: tests' fixtures).
 */
export function actingSettings(acting: Acting | undefined, appRole: string | undefined): string[] {
  const role = appRole ? (acting?.system ? systemRoleName(appRole) : appRole) : '';
  return [role, acting?.companyId ?? '', acting?.system ?? ''];
}

/** The role a knex acts as (db/knex.ts `actAs`), if any. */
function appRoleOf(knex: Knex): string | undefined {
  return (knex.client as { config?: { actAs?: string } }).config?.actAs;
}

/**
 * Runs one statement (or a few, each on its own pooled connection) as `acting` without a transaction: the
 * connection is set to the actor when taken from the pool (db/knex.ts). The query is started inside the
 * scope (a knex builder is lazy: awaited outside, it would run outside).
 */
export function actingStatement<T>(acting: Acting, query: () => PromiseLike<T>): Promise<T> {
  return actingAs(acting, async () => await query());
}

/** What a connection's session-level settings hold, as db/knex.ts remembers it on the connection. */
export function actingKey(settings: string[]): string {
  return settings.join('|');
}

/**
 * Whether `trx` runs on a connection whose session-level settings already are `settings` (set when it left
 * the pool, db/knex.ts): then its transaction acts as them with nothing more to send. Never for a nested
 * unit of work (a savepoint), whose outer transaction may have set another actor for itself.
 */
async function connectionActsAs(trx: Knex.Transaction, settings: string[]): Promise<boolean> {
  if ((trx as { parentTransaction?: unknown }).parentTransaction) return false;
  const client = trx.client as { acquireConnection(): Promise<{ actingKey?: string }> };
  const conn = await client.acquireConnection(); // a transaction's client gives its own connection
  return conn.actingKey === actingKey(settings);
}

/**
 * Sets the actor of the current transaction (all settings, so a nested unit of work replaces them), unless
 * its connection already acts as that actor: the usual case of a request's unit of work, which then costs
 * no round trip more than its own statements.
 */
async function applyActing(trx: Knex.Transaction, acting: Acting | undefined): Promise<void> {
  const appRole = appRoleOf(trx);
  const values = actingSettings(acting, appRole);
  if (appRole && (await connectionActsAs(trx, values))) return;
  if (!appRole) {
    await trx.raw(`select set_config('app.company_id', ?, true), set_config('app.system_task', ?, true)`, [
      values[1],
      values[2],
    ]);
    return;
  }
  await trx.raw(
    `select set_config('role', ?, true), set_config('app.company_id', ?, true), set_config('app.system_task', ?, true)`,
    values,
  );
}

/**
 * The one way a transaction is opened under row-level security: `acting` set first (`applyActing`), and
 * the scope's actor while `fn` runs. `unitOfWork`, `withCompany`, `asSystem` and db/transaction.ts
 * `transact` (with its outbox and after-commit hooks) all go through it.
 */
export function transactionActingAs<T>(
  knex: Knex,
  acting: Acting | undefined,
  fn: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  return knex.transaction(async (trx) => {
    await applyActing(trx, acting);
    return acting ? scope.run(acting, () => fn(trx)) : fn(trx);
  });
}

/** One transaction acting as the scope's actor (see the module comment). */
export function unitOfWork<T>(knex: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return transactionActingAs(knex, currentActing(), fn);
}

/** One transaction acting for `companyId`: no row of another company is visible or writable. */
export function withCompany<T>(
  knex: Knex,
  companyId: string,
  fn: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  if (!companyId) throw new Error('withCompany without a company');
  return transactionActingAs(knex, { companyId }, fn);
}

/** One transaction of the named cross-company task `task` (SYSTEM_TASKS). */
export function asSystem<T>(
  knex: Knex,
  task: SystemTask,
  fn: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  if (!SYSTEM_TASKS.includes(task)) throw new Error(`unknown system task ${String(task)}`);
  return transactionActingAs(knex, { system: task }, fn);
}
