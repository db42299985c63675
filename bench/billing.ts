/**
 * Billing benchmark (issue 16): finalising one closed period for N companies with usage and plan changes,
 * through the real Temporal workflow (chunks of 200 companies, 4 at a time, each one transaction, documents
 * rendered and stored), against a plain loop computing and inserting the same invoices (invoice, its
 * `invoice.finalized` event and its PDF in MinIO, one company after the other, one transaction each) in this
 * process against the same database, same run. Then the same period once more through the workflow: it
 * must create nothing.
 *
 *   node dist/bench/billing.js            (BENCH_COMPANIES, default 10000)
 *
 * Uses a database, an S3 prefix and a task queue of its own (bench/lib.ts) and removes them at the end.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import type { Knex } from 'knex';
import { createLogger } from '../common/logger';
import { computeBill, invoiceNumber, isBillable } from '../domain/billing/compute';
import { storeInvoiceDocument } from '../domain/billing/document';
import { previousPeriodKey } from '../domain/billing/policy';
import { periodBounds, type PlanName } from '../domain/plans/plans';
import { transact } from '../db/transaction';
import { createWorker } from '../worker/worker';
import { installTemporalRuntime } from '../worker/runtime';
import { BILLING_PERIOD_WORKFLOW, type BillingPeriodResult } from '../workflows/definitions/billing';
import { workflowIdentity, SYSTEM_COMPANY } from '../workflows/shared';
import { runMain, startBenchRun, type BenchRun } from './lib';

const COMPANIES = Number(process.env.BENCH_COMPANIES ?? 10_000);

/** Companies with plan history and usage: Basic all period, Basic → Premium mid-period, Premium → Basic, Premium with excess. */
async function seed(knex: Knex, periodKey: string): Promise<void> {
  const { start } = periodBounds(periodKey);
  const before = new Date(start.getTime() - 86400_000 * 20);
  const at = (days: number, hours = 0) => new Date(start.getTime() + days * 86400_000 + hours * 3600_000);
  for (let offset = 0; offset < COMPANIES; offset += 1000) {
    const companies: Array<Record<string, unknown>> = [];
    const changes: Array<Record<string, unknown>> = [];
    const usage: Array<Record<string, unknown>> = [];
    for (let i = offset; i < Math.min(COMPANIES, offset + 1000); i++) {
      const id = randomUUID();
      companies.push({ id, name: `Bench ${i}`, status: 'active', plan: null });
      const kind = i % 4;
      const plans: Array<[PlanName, Date]> =
        kind === 0
          ? [['basic', before]]
          : kind === 1
            ? [
                ['basic', before],
                ['premium', at(9, 7 + (i % 11))],
              ]
            : kind === 2
              ? [
                  ['premium', before],
                  ['basic', at(17, i % 13)],
                ]
              : [
                  ['free', before],
                  ['premium', at(3, i % 5)],
                ];
      for (const [plan, effectiveAt] of plans) changes.push({ companyId: id, plan, effectiveAt });
      usage.push({ companyId: id, periodKey, filesUsed: kind === 3 ? 2000 + (i % 300) : i % 150 });
    }
    await knex('companies').insert(companies);
    await knex('planChanges').insert(changes);
    await knex('fileUsage').insert(usage);
  }
}

/** The plain loop: one company after the other, each read, computed, inserted (with its event) and rendered. */
async function plainLoop(run: BenchRun, periodKey: string): Promise<number> {
  const { start, end } = periodBounds(periodKey);
  const ids = (
    (await run.knex('companies').select('id', 'name').where('isDemo', false).orderBy('id')) as Array<{
      id: string;
      name: string;
    }>
  ).map((r) => r);
  let created = 0;
  for (const company of ids) {
    const invoice = await transact(
      run.appKnex,
      async (uow) => {
        const trx = uow.trx;
        const history = (await trx('planChanges')
          .select('plan', 'effectiveAt')
          .where('companyId', company.id)
          .where('effectiveAt', '<', end)
          .orderBy([{ column: 'effectiveAt' }, { column: 'id' }])) as Array<{
          plan: PlanName;
          effectiveAt: Date;
        }>;
        const usage = (await trx('fileUsage').where({ companyId: company.id, periodKey }).first()) as
          { filesUsed: number } | undefined;
        const bill = computeBill({ periodKey, history, filesUsed: Number(usage?.filesUsed ?? 0), asOf: end });
        if (!isBillable(bill)) return undefined;
        const last = (await trx('invoices')
          .where('companyId', company.id)
          .max({ last: 'sequence' })
          .first()) as {
          last: number | null;
        };
        const sequence = Number(last?.last ?? 0) + 1;
        const id = randomUUID();
        const row = {
          id,
          companyId: company.id,
          sequence,
          number: invoiceNumber(start, sequence),
          periodKey,
          periodStart: start,
          periodEnd: end,
          currency: bill.currency,
          subtotalCents: bill.subtotalCents,
          totalCents: bill.totalCents,
          lines: JSON.stringify(bill.lines),
          segments: JSON.stringify(bill.segments),
          filesUsed: bill.filesUsed,
          companyName: company.name,
        };
        await trx('invoices').insert(row);
        await uow.emit({
          companyId: company.id,
          type: 'invoice.finalized',
          data: {
            invoiceId: id,
            totalCents: bill.totalCents,
            periodStart: start.toISOString(),
            periodEnd: end.toISOString(),
          },
        });
        return { ...row, issuedAt: new Date(), lines: bill.lines };
      },
      { acting: { system: 'billing' } },
    );
    if (!invoice) continue;
    const key = await storeInvoiceDocument(run.storage, invoice);
    await run.appKnex.transaction(async (trx) => {
      await trx.raw(`select set_config('role', ?, true), set_config('app.system_task', 'billing', true)`, [
        `${run.config.databaseAppRole}_system`,
      ]);
      await trx('invoices').where('id', invoice.id).update({ documentKey: key });
    });
    created++;
  }
  return created;
}

async function main(): Promise<void> {
  const run = await startBenchRun();
  const logger = createLogger('warn', 'bench-billing');
  installTemporalRuntime(logger);
  const periodKey = previousPeriodKey(new Date());
  const connection = await NativeConnection.connect({ address: run.config.temporal.address });
  const client = new Client({ connection, namespace: run.config.temporal.namespace });
  let stopWorker: (() => Promise<void>) | undefined;
  try {
    console.log(
      `billing benchmark: ${COMPANIES} companies, period ${periodKey}, task queue ${run.config.temporal.taskQueue}`,
    );
    let t = performance.now();
    await seed(run.knex, periodKey);
    console.log(`seeded in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    t = performance.now();
    const plainCreated = await plainLoop(run, periodKey);
    const plainSeconds = (performance.now() - t) / 1000;
    console.log(`plain loop: ${plainCreated} invoices in ${plainSeconds.toFixed(1)} s`);
    await run.knex('invoices').delete();
    await run.knex('outbox').delete();

    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../workflows'),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
    });
    const worker = await createWorker({
      config: run.config,
      knex: run.appKnex,
      logger,
      connection,
      client,
      workflowBundle,
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
    };
    const finalize = async (suffix: string) => {
      const identity = workflowIdentity({
        kind: 'billing',
        parts: [periodKey, run.config.temporal.taskQueue, suffix],
        companyId: SYSTEM_COMPANY,
        taskQueue: run.config.temporal.taskQueue,
      });
      const started = performance.now();
      const handle = await client.workflow.start(BILLING_PERIOD_WORKFLOW, {
        ...identity,
        args: [{ periodKey, trigger: 'operator' }],
      });
      const result = (await handle.result()) as BillingPeriodResult;
      return { result, seconds: (performance.now() - started) / 1000 };
    };
    const first = await finalize('first');
    const count = Number(((await run.knex('invoices').count({ n: '*' }).first()) as { n: string }).n);
    console.log(
      `workflow: ${first.result.invoicesCreated} invoices (${count} in the table, ${first.result.documentsRendered} documents) in ${first.seconds.toFixed(1)} s, ${first.result.chunks} chunks`,
    );
    const second = await finalize('second');
    console.log(
      `second run of the same period: ${second.result.invoicesCreated} created, ${second.result.alreadyInvoiced} already invoiced, in ${second.seconds.toFixed(1)} s`,
    );
    const ratio = first.seconds / plainSeconds;
    console.log(
      `ratio workflow / plain loop: ${ratio.toFixed(2)} (target ≤ 2); invoices ${count} (expected ${plainCreated}); second run created ${second.result.invoicesCreated} (expected 0)`,
    );
    if (count !== plainCreated || second.result.invoicesCreated !== 0)
      throw new Error('invoice counts differ');
  } finally {
    if (stopWorker) await stopWorker();
    await connection.close();
    await run.close();
  }
}

runMain(main);
