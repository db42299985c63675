import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { OutboxEvent } from './models';

/** Event types of the spec's Events table (plus `ping`). */
export const EVENT_TYPES = [
  'file.uploaded',
  'file.sensitive_data_found',
  'dataset.changed',
  'dataset.schema_changed',
  'report.ready',
  'report.failed',
  'rules.failed',
  'quota.threshold',
  'invoice.finalized',
  'ping',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  companyId: string;
  type: EventType;
  /** ids and numbers only, never cell values */
  data: Record<string, unknown>;
}

export interface UnitOfWork {
  trx: Knex.Transaction;
  /** Writes the event into the outbox in this transaction: it exists if and only if the change commits. */
  emit: (event: NewEvent) => Promise<string>;
  /** Runs after a successful commit (e.g. start a workflow); never runs when the transaction rolls back. */
  afterCommit: (fn: () => Promise<void> | void) => void;
}

export interface TransactOptions {
  correlationId?: string;
  /** Called for errors thrown by after-commit hooks: the change is saved, the hook's failure is logged. */
  onAfterCommitError?: (err: unknown) => void;
}

/** Runs `work` in one transaction together with the events it emits. */
export async function transact<T>(
  knex: Knex,
  work: (uow: UnitOfWork) => Promise<T>,
  options: TransactOptions = {},
): Promise<T> {
  const hooks: Array<() => Promise<void> | void> = [];
  const result = await knex.transaction(async (trx) => {
    const uow: UnitOfWork = {
      trx,
      emit: async (event) => {
        const id = randomUUID();
        await OutboxEvent.query(trx).insert({
          id,
          companyId: event.companyId,
          type: event.type,
          data: event.data,
          correlationId: options.correlationId ?? null,
        });
        return id;
      },
      afterCommit: (fn) => {
        hooks.push(fn);
      },
    };
    return work(uow);
  });
  for (const hook of hooks) {
    try {
      await hook();
    } catch (err) {
      if (options.onAfterCommitError) options.onAfterCommitError(err);
      else throw err;
    }
  }
  return result;
}
