/**
 * Operators: suspend or reactivate a company, with a reason (README "Billing"); audited in the company's
 * audit log (company.suspended / company.reactivated, the reason and the operator in its details).
 *   npm run company:suspend -- <companyId> --reason "unpaid invoice 2026-000003"
 *   npm run company:reactivate -- <companyId> --reason "paid"
 * Prints {companyId, from, to, changed} as JSON; doing it twice changes nothing the second time.
 * Reactivating also wakes the company's held webhook deliveries (domain/webhooks/wake.ts), after the commit
 * and each time it is run: best effort, a failure is reported on stderr and their timers remain.
 */
import { parseArgs } from 'node:util';
import os from 'node:os';
import { loadConfig, type Config } from '../common/config';
import { createTemporalClient } from '../common/temporal';
import { createKnex, migrateLatest } from '../db/knex';
import { setCompanyStatus } from '../domain/billing/companyStatus';
import { WAKE_MAX_WORKFLOWS, wakeHeldDeliveries } from '../domain/webhooks/wake';

/** How long waking the held deliveries may take before the script gives up on it (their timers remain). */
const WAKE_DEADLINE_MS = 30_000;

/** An error's message and its causes' (the client's "Failed to list workflows" says why only in its cause). */
function describe(err: unknown, depth = 0): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause !== undefined && depth < 3
    ? `${err.message}: ${describe(err.cause, depth + 1)}`
    : err.message;
}

/**
 * Signals the company's held webhook deliveries to check again now (README "Billing"). Never throws: what
 * went wrong is written to stderr, and a delivery not woken goes on when its timer ends (at most 30 minutes).
 */
async function wakeDeliveries(config: Config, companyId: string): Promise<void> {
  const client = createTemporalClient(config);
  try {
    const woken = await client.connection.withDeadline(Date.now() + WAKE_DEADLINE_MS, () =>
      wakeHeldDeliveries(client, companyId),
    );
    const notes = [`${woken.signalled} workflows woken`];
    if (woken.errors.length > 0) {
      const first = woken.errors[0];
      notes.push(
        `${woken.errors.length} could not be (${describe(first)}); ` + 'they go on when their timers end',
      );
    }
    if (woken.capped)
      notes.push(
        `more than ${WAKE_MAX_WORKFLOWS} are running: the others go on when their timers end ` +
          '(running this again once the woken ones have finished wakes more)',
      );
    console.error(`held webhook deliveries: ${notes.join('; ')}`);
  } catch (err) {
    console.error(
      `could not wake the held webhook deliveries (they go on when their timers end): ${describe(err)}`,
    );
  } finally {
    await client.connection.close().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      suspend: { type: 'boolean', default: false },
      reactivate: { type: 'boolean', default: false },
      reason: { type: 'string' },
      operator: { type: 'string' },
    },
  });
  const companyId = positionals[0];
  const problems: string[] = [];
  if (values.suspend === values.reactivate) problems.push('exactly one of --suspend or --reactivate');
  if (!companyId || !/^[0-9a-f-]{36}$/i.test(companyId)) problems.push('the company id (a UUID) is required');
  if (!values.reason?.trim()) problems.push('--reason is required');
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(2);
  }
  const config = loadConfig();
  const knex = createKnex(config.databaseUrl, 2);
  try {
    await migrateLatest(knex);
    const result = await knex.transaction((trx) =>
      setCompanyStatus(trx, {
        companyId,
        status: values.suspend ? 'suspended' : 'active',
        reason: values.reason!.trim(),
        operator: values.operator ?? process.env.USER ?? os.userInfo().username,
      }),
    );
    // reactivated: wake the outbox dispatcher for the events held meanwhile
    if (result.changed && result.to === 'active') await knex.raw(`select pg_notify('outbox', '')`);
    // and the deliveries held in workflows (also when it was active already: a run again retries the wake)
    if (result.to === 'active') await wakeDeliveries(config, companyId);
    console.log(JSON.stringify(result));
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
