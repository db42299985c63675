/**
 * The transactional outbox, infrastructure shared by every capability: `transact()` (db/transaction.ts)
 * writes an event in the same transaction as its change; the dispatcher (workflows/outboxDispatcher.ts, its
 * activity in activities/outbox.ts) claims unsent rows here and hands them to the capabilities' consumers —
 * today the webhooks domain's fan-out (domain/webhooks/fanOut.ts), which turns them into deliveries.
 */
import type { Knex } from 'knex';
import type { OutboxEvent } from './models';

/** What a fan-out step wants done once the claimed batch has committed. */
export type AfterCommit = () => Promise<void>;

/**
 * Turns claimed events into work inside the claiming transaction (e.g. delivery records) and returns what
 * must happen after commit (e.g. start delivery workflows, whose ids derive from the records).
 */
export type FanOut = (trx: Knex.Transaction, events: OutboxEvent[]) => Promise<AfterCommit[]>;

/**
 * Claims up to `batchSize` unsent rows with FOR UPDATE SKIP LOCKED (several dispatchers never take the same
 * row) — except those of suspended companies, held until reactivation (README "Billing") —, hands them to `fanOut` in the same transaction and marks them dispatched; after commit runs what the
 * fan-out asked for. Returns how many rows it dispatched.
 */
export async function claimAndDispatch(knex: Knex, batchSize: number, fanOut?: FanOut): Promise<number> {
  const afterCommit: AfterCommit[] = [];
  const count = await knex.transaction(async (trx) => {
    const rows = (await trx('outbox')
      .select('*')
      .whereNull('dispatchedAt')
      // a suspended company's events wait here (no webhook is sent) and go out once it is reactivated
      .whereNotExists((q) =>
        q
          .select(trx.raw('1'))
          .from('companies')
          .whereRaw('companies.id = outbox.company_id')
          .where('status', 'suspended'),
      )
      .orderBy([{ column: 'createdAt' }, { column: 'id' }])
      .limit(batchSize)
      .forUpdate()
      .skipLocked()) as OutboxEvent[];
    if (rows.length === 0) return 0;
    if (fanOut) afterCommit.push(...(await fanOut(trx, rows)));
    await trx('outbox')
      .whereIn(
        'id',
        rows.map((r) => r.id),
      )
      .update({ dispatchedAt: trx.fn.now() });
    return rows.length;
  });
  for (const step of afterCommit) await step();
  return count;
}

/** Resolves when an outbox row commits (NOTIFY from the insert trigger), after `ms`, or on `abort`. */
export async function waitForEvents(knex: Knex, ms: number, abort: AbortSignal): Promise<void> {
  const client = knex.client as {
    acquireConnection(): Promise<PgConnection>;
    releaseConnection(c: PgConnection): Promise<void>;
  };
  const conn = await client.acquireConnection();
  let timer: NodeJS.Timeout | undefined;
  let onNotify: (() => void) | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await conn.query('LISTEN outbox');
    await new Promise<void>((resolve) => {
      onNotify = resolve;
      conn.on('notification', onNotify);
      timer = setTimeout(resolve, ms);
      onAbort = resolve;
      abort.addEventListener('abort', onAbort);
    });
  } finally {
    if (timer) clearTimeout(timer);
    if (onAbort) abort.removeEventListener('abort', onAbort);
    if (onNotify) conn.removeListener('notification', onNotify);
    await conn.query('UNLISTEN outbox').catch(() => undefined);
    await client.releaseConnection(conn);
  }
}

interface PgConnection {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', fn: () => void): void;
  removeListener(event: 'notification', fn: () => void): void;
}
