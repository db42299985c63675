/**
 * Billing numbers and pure functions shared with the workflow sandbox (no Node built-ins here).
 */

/** Companies per finalisation chunk (one activity, one transaction). */
export const DEFAULT_CHUNK_SIZE = 200;
/** Chunks of one period finalised at the same time. */
export const DEFAULT_CHUNK_CONCURRENCY = 4;

/** The period (calendar month, UTC, e.g. 2026-10) before the month of `at`: what a run at the start of a month closes. */
export function previousPeriodKey(at: Date): string {
  const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** What finalising one chunk reports, as far as a period's totals need it. */
export interface ChunkCounts {
  companies: unknown[];
  created: unknown[];
  alreadyInvoiced: number;
  notBillable: number;
  documentsRendered: number;
}

/** A period's totals over its chunks. */
export interface PeriodTotals {
  chunks: number;
  companies: number;
  invoicesCreated: number;
  alreadyInvoiced: number;
  notBillable: number;
  documentsRendered: number;
}

/**
 * Finalises `chunks` with `finalize`, `concurrency` lanes at a time (at least one), each lane taking the next
 * chunk when its last one is done, and adds up what they report. Pure: the billing workflow runs it over its
 * activity, `finalizePeriodHere` over the domain function.
 */
export async function finalizeInLanes<C>(
  chunks: C[],
  concurrency: number,
  finalize: (chunk: C) => Promise<ChunkCounts>,
): Promise<PeriodTotals> {
  const total: PeriodTotals = {
    chunks: chunks.length,
    companies: 0,
    invoicesCreated: 0,
    alreadyInvoiced: 0,
    notBillable: 0,
    documentsRendered: 0,
  };
  let next = 0;
  const lane = async () => {
    while (next < chunks.length) {
      const done = await finalize(chunks[next++]);
      total.companies += done.companies.length;
      total.invoicesCreated += done.created.length;
      total.alreadyInvoiced += done.alreadyInvoiced;
      total.notBillable += done.notBillable;
      total.documentsRendered += done.documentsRendered;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, lane));
  return total;
}
