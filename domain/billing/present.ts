import type { Invoice } from '../../db/models';
import type { Bill } from './compute';

/** The running bill: the bill of the current period as of now (GET /billing/current). */
export function presentBill(bill: Bill) {
  return {
    periodKey: bill.periodKey,
    periodStart: bill.periodStart.toISOString(),
    periodEnd: bill.periodEnd.toISOString(),
    asOf: bill.asOf.toISOString(),
    segments: bill.segments.map((s) => ({
      plan: s.plan,
      start: s.start.toISOString(),
      end: s.end.toISOString(),
      seconds: s.seconds,
    })),
    filesUsed: bill.filesUsed,
    lines: bill.lines.map((l) => ({ ...l })),
    subtotalCents: bill.subtotalCents,
    totalCents: bill.totalCents,
    currency: bill.currency,
  };
}

const iso = (d: Date | string) => new Date(d).toISOString();

export function presentInvoice(row: Invoice) {
  return {
    id: row.id,
    number: row.number,
    status: row.status,
    periodKey: row.periodKey,
    periodStart: iso(row.periodStart),
    periodEnd: iso(row.periodEnd),
    segments: row.segments,
    filesUsed: row.filesUsed,
    lines: row.lines,
    subtotalCents: Number(row.subtotalCents),
    totalCents: Number(row.totalCents),
    currency: row.currency,
    issuedAt: iso(row.issuedAt),
    documentAvailable: row.documentKey !== null,
  };
}
