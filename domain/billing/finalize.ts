/**
 * Finalising a closed billing period (README "Billing"): invoices for every billable company, in chunks of
 * companies ordered by id, each chunk one transaction under the named system task `billing`.
 *
 * Exactly one invoice per company and period that is not void: the chunk locks its companies' rows (FOR NO
 * KEY UPDATE, in id order) before it looks for existing invoices, so two runs of the same companies serialise
 * and the second finds the first's invoices; the database refuses a second one anyway (unique company + period
 * start where the status is not `void`) and a number used twice (unique company + sequence). A period whose
 * invoice an operator voided is invoiced again by the next run, under the company's next number. The invoice
 * and its `invoice.finalized` event are written in the same transaction. Documents are rendered after the
 * commit; a re-run renders those still missing.
 */
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../common/logger';
import type { Storage } from '../../common/storage';
import { transact } from '../../db/transaction';
import { asSystem } from '../../db/unitOfWork';
import { periodBounds, type PlanName } from '../plans/plans';
import { computeBill, invoiceNumber, isBillable, type Bill, type PlanChange } from './compute';
import { storeInvoiceDocument, type InvoiceDocumentInput } from './document';
import { onEach, laneNumbers } from '../../common/lanes';
import { DEFAULT_CHUNK_SIZE, finalizeInLanes, type PeriodTotals } from './policy';
import { notifyInvoiceFinalized } from '../notifications/notify';

export interface BillingDeps {
  knex: Knex;
  storage: Storage;
  logger?: Logger;
}

/** Called after each company of a chunk is computed, before the chunk commits (tests that kill a run midway). */
export type BillingChunkHook = (info: {
  periodKey: string;
  companyId: string;
  index: number;
}) => void | Promise<void>;

export interface BillingChunk {
  /** companies with an id greater than this (null: from the first) … */
  afterId: string | null;
  /** … up to and including this one */
  throughId: string;
  count: number;
}

export interface ChunkResult {
  periodKey: string;
  /** every company of the chunk, so an operator finds a company's run (the activity's result in the Web UI) */
  companies: string[];
  created: Array<{ companyId: string; invoiceId: string; number: string; totalCents: number }>;
  alreadyInvoiced: number;
  notBillable: number;
  documentsRendered: number;
}

/** `2026-10`-style keys only, and only periods that have ended by `now`. */
export function closedPeriod(periodKey: string, now: Date = new Date()): { start: Date; end: Date } {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(periodKey)) throw new Error(`invalid billing period "${periodKey}"`);
  const bounds = periodBounds(periodKey);
  if (bounds.end.getTime() > now.getTime()) throw new Error(`billing period ${periodKey} has not ended yet`);
  return bounds;
}

/**
 * The companies that may owe for the period, split into chunks of `size`: every company but the demo that
 * had a plan recorded before the period's end. One query; the chunks are id ranges.
 */
export async function billingChunks(
  knex: Knex,
  periodKey: string,
  size = DEFAULT_CHUNK_SIZE,
): Promise<BillingChunk[]> {
  const { end } = periodBounds(periodKey);
  const ids = await asSystem(knex, 'billing', async (trx) => {
    const rows = (await candidates(trx, end).select('c.id').orderBy('c.id')) as Array<{ id: string }>;
    return rows.map((r) => r.id);
  });
  const chunks: BillingChunk[] = [];
  for (let i = 0; i < ids.length; i += size) {
    const part = ids.slice(i, i + size);
    chunks.push({
      afterId: i === 0 ? null : ids[i - 1],
      throughId: part[part.length - 1],
      count: part.length,
    });
  }
  return chunks;
}

/** Companies (`c`) that may owe for a period ending at `end`: not the demo, a plan recorded before the end. */
function candidates(trx: Knex.Transaction, end: Date): Knex.QueryBuilder {
  return trx('companies as c')
    .where('c.isDemo', false)
    .whereExists((q) =>
      q
        .select(trx.raw('1'))
        .from('planChanges as pc')
        .whereRaw('pc.company_id = c.id')
        .where('pc.effectiveAt', '<', end),
    );
}

interface CompanyRow {
  id: string;
  name: string;
}

/** The plan histories (changes before the period's end) of `companyIds`, by company, in the order made. */
export async function planHistories(
  db: Knex | Knex.Transaction,
  companyIds: string[],
  before: Date,
): Promise<Map<string, PlanChange[]>> {
  const rows = (await db('planChanges')
    .select('companyId', 'plan', 'effectiveAt')
    .whereIn('companyId', companyIds)
    .where('effectiveAt', '<', before)
    .orderBy([{ column: 'companyId' }, { column: 'effectiveAt' }, { column: 'id' }])) as Array<{
    companyId: string;
    plan: PlanName | null;
    effectiveAt: Date;
  }>;
  const byCompany = new Map<string, PlanChange[]>();
  for (const r of rows) {
    let list = byCompany.get(r.companyId);
    if (!list) byCompany.set(r.companyId, (list = []));
    list.push({ plan: r.plan, effectiveAt: r.effectiveAt });
  }
  return byCompany;
}

/** Files counted in the period for `companyIds`. */
export async function periodUsage(
  db: Knex | Knex.Transaction,
  companyIds: string[],
  periodKey: string,
): Promise<Map<string, number>> {
  const rows = (await db('fileUsage')
    .select('companyId', 'filesUsed')
    .whereIn('companyId', companyIds)
    .where({ periodKey })) as Array<{ companyId: string; filesUsed: number }>;
  return new Map(rows.map((r) => [r.companyId, Number(r.filesUsed)]));
}

/**
 * Finalises the period for the companies of one chunk (id range), in one transaction. Idempotent: companies
 * already invoiced for the period (an invoice that is not void) are counted and left alone; the documents
 * still missing are rendered.
 */
export async function finalizeChunk(
  deps: BillingDeps,
  input: {
    periodKey: string;
    afterId: string | null;
    throughId: string;
    workflowId?: string;
    now?: Date;
    hook?: BillingChunkHook;
  },
): Promise<ChunkResult> {
  const { start, end } = closedPeriod(input.periodKey, input.now);
  const result: ChunkResult = {
    periodKey: input.periodKey,
    companies: [],
    created: [],
    alreadyInvoiced: 0,
    notBillable: 0,
    documentsRendered: 0,
  };
  await transact(
    deps.knex,
    async (uow) => {
      const { trx } = uow;
      // the chunk's companies: those of its id range that billingChunks counted (a plan before the period's end)
      const range = candidates(trx, end).where('c.id', '<=', input.throughId);
      if (input.afterId) void range.where('c.id', '>', input.afterId);
      // NO KEY UPDATE: conflicts with another chunk's lock and with changes of the company (plan, status), but
      // not with the foreign-key checks (FOR KEY SHARE) of rows inserted for it meanwhile (files, events, …)
      const companies = (await range
        .select('c.id', 'c.name')
        .orderBy('c.id')
        .forNoKeyUpdate()) as CompanyRow[];
      result.companies = companies.map((c) => c.id);
      if (companies.length === 0) return;
      const ids = companies.map((c) => c.id);
      const invoiced = new Set(
        (
          (await trx('invoices')
            .select('companyId')
            .whereIn('companyId', ids)
            .where('periodStart', start)
            // a void invoice does not count: the period is invoiced again (README "Billing")
            .whereNot('status', 'void')) as Array<{
            companyId: string;
          }>
        ).map((r) => r.companyId),
      );
      result.alreadyInvoiced = invoiced.size;
      const todo = companies.filter((c) => !invoiced.has(c.id));
      if (todo.length === 0) return;
      const todoIds = todo.map((c) => c.id);
      // one connection: its statements one after the other
      const histories = await planHistories(trx, todoIds, end);
      const usage = await periodUsage(trx, todoIds, input.periodKey);
      const sequences = (await trx('invoices')
        .select('companyId')
        .max({ last: 'sequence' })
        .whereIn('companyId', todoIds)
        .groupBy('companyId')) as Array<{ companyId: string; last: number }>;
      const lastSequence = new Map(sequences.map((r) => [r.companyId, Number(r.last)]));
      const rows: Array<Record<string, unknown>> = [];
      const bills: Array<{ id: string; companyId: string; number: string; bill: Bill }> = [];
      let index = 0;
      for (const company of todo) {
        const bill = computeBill({
          periodKey: input.periodKey,
          history: histories.get(company.id) ?? [],
          filesUsed: usage.get(company.id) ?? 0,
          asOf: end,
        });
        if (input.hook)
          await input.hook({ periodKey: input.periodKey, companyId: company.id, index: index++ });
        if (!isBillable(bill)) {
          result.notBillable++;
          continue;
        }
        const sequence = (lastSequence.get(company.id) ?? 0) + 1;
        const id = randomUUID();
        const number = invoiceNumber(start, sequence);
        rows.push({
          id,
          companyId: company.id,
          sequence,
          number,
          periodKey: input.periodKey,
          periodStart: start,
          periodEnd: end,
          status: 'finalized',
          currency: bill.currency,
          subtotalCents: bill.subtotalCents,
          totalCents: bill.totalCents,
          lines: JSON.stringify(bill.lines),
          segments: JSON.stringify(bill.segments),
          filesUsed: bill.filesUsed,
          companyName: company.name,
          workflowId: input.workflowId ?? null,
        });
        bills.push({ id, companyId: company.id, number, bill });
      }
      if (rows.length === 0) return;
      await trx('invoices').insert(rows);
      for (const b of bills) {
        await uow.emit({
          companyId: b.companyId,
          type: 'invoice.finalized',
          data: {
            invoiceId: b.id,
            number: b.number,
            totalCents: b.bill.totalCents,
            currency: b.bill.currency,
            periodStart: start.toISOString(),
            periodEnd: end.toISOString(),
          },
        });
        // the admins' notification, in the invoice's transaction (issue 15)
        await notifyInvoiceFinalized(uow, {
          companyId: b.companyId,
          invoiceId: b.id,
          totalCents: b.bill.totalCents,
          periodStart: start.toISOString(),
          periodEnd: end.toISOString(),
        });
        result.created.push({
          companyId: b.companyId,
          invoiceId: b.id,
          number: b.number,
          totalCents: b.bill.totalCents,
        });
      }
    },
    { acting: { system: 'billing' }, log: deps.logger },
  );
  if (result.companies.length > 0)
    result.documentsRendered = await renderMissingDocuments(deps, input.periodKey, result.companies);
  return result;
}

/** An invoice row as the driver reads it: the document's fields, the amounts as bigint strings. */
type InvoiceRow = Omit<InvoiceDocumentInput, 'subtotalCents' | 'totalCents'> & {
  subtotalCents: string | number;
  totalCents: string | number;
};

/** The document input of an invoice row. */
export function documentInput(row: InvoiceRow): InvoiceDocumentInput {
  return {
    id: row.id,
    companyId: row.companyId,
    companyName: row.companyName,
    number: row.number,
    periodKey: row.periodKey,
    periodStart: row.periodStart,
    periodEnd: row.periodEnd,
    issuedAt: row.issuedAt,
    currency: row.currency,
    lines: row.lines,
    subtotalCents: Number(row.subtotalCents),
    totalCents: Number(row.totalCents),
  };
}

const DOCUMENT_CONCURRENCY = 4;

/** Renders and stores the documents of the period's invoices of `companyIds` that have none yet. */
export async function renderMissingDocuments(
  deps: BillingDeps,
  periodKey: string,
  companyIds: string[],
): Promise<number> {
  const missing = (await asSystem(deps.knex, 'billing', (trx) =>
    trx('invoices')
      .select(
        'id',
        'companyId',
        'companyName',
        'number',
        'periodKey',
        'periodStart',
        'periodEnd',
        'issuedAt',
        'currency',
        'lines',
        'subtotalCents',
        'totalCents',
      )
      .whereIn('companyId', companyIds)
      .where({ periodKey })
      .whereNull('documentKey'),
  )) as InvoiceRow[];
  const done: Array<{ id: string; key: string }> = [];
  await onEach(laneNumbers(Math.min(DOCUMENT_CONCURRENCY, missing.length)), missing, async (_, row) => {
    done.push({ id: row.id, key: await storeInvoiceDocument(deps.storage, documentInput(row)) });
  });
  if (done.length === 0) return 0;
  await asSystem(deps.knex, 'billing', (trx) =>
    trx.raw(
      `update invoices set document_key = v.key, updated_at = now()
       from (select unnest(?::uuid[]) as id, unnest(?::text[]) as key) v where invoices.id = v.id`,
      [done.map((d) => d.id), done.map((d) => d.key)],
    ),
  );
  return done.length;
}

/** The whole period in this process, chunk after chunk, `concurrency` at a time (operators' `--direct`, bench). */
export async function finalizePeriodHere(
  deps: BillingDeps,
  input: { periodKey: string; chunkSize?: number; concurrency?: number; workflowId?: string },
): Promise<PeriodTotals> {
  closedPeriod(input.periodKey);
  const chunks = await billingChunks(deps.knex, input.periodKey, input.chunkSize ?? DEFAULT_CHUNK_SIZE);
  return finalizeInLanes(chunks, input.concurrency ?? 4, (c) =>
    finalizeChunk(deps, {
      periodKey: input.periodKey,
      afterId: c.afterId,
      throughId: c.throughId,
      workflowId: input.workflowId,
    }),
  );
}
