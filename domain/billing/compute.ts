/**
 * The bill of one company for one billing period, computed from the recorded plan history and the
 * period's file usage alone, in integer cents (README "Billing"). Pure: the running bill, the invoice,
 * the benchmark's plain loop and the tests' hand computations all go through `computeBill`.
 *
 * - Periods are calendar months in UTC (`periodKey`, common plans).
 * - Proration is by the second: every plan segment (the time a plan was in effect inside the period,
 *   boundaries truncated to the second) costs floor(monthly price × segment seconds / period seconds).
 *   A whole period on one plan costs exactly its monthly price.
 * - Billing is in arrears, so a downgrade refunds nothing: the time on the dearer plan is billed at its rate,
 *   the rest at the cheaper one; there are no credit lines and a total is never negative.
 * - Files over the quota are billed at the rates of the plan in effect at the end of the bill (its "as of"
 *   time), if that plan bills excess files (Premium): (files used − quota) × price per excess file.
 */
import { periodBounds, planLimits, type PlanName } from '../plans/plans';

export const CURRENCY = 'USD';

export interface PlanChange {
  plan: PlanName | null;
  effectiveAt: Date;
}

export interface PlanSegment {
  plan: PlanName | null;
  start: Date;
  end: Date;
  seconds: number;
}

export type BillLine =
  | {
      kind: 'plan';
      description: string;
      plan: PlanName;
      start: string;
      end: string;
      seconds: number;
      periodSeconds: number;
      unitCents: number;
      quantity: 1;
      amountCents: number;
    }
  | {
      kind: 'excess_files';
      description: string;
      plan: PlanName;
      quantity: number;
      unitCents: number;
      amountCents: number;
    };

export interface Bill {
  periodKey: string;
  periodStart: Date;
  periodEnd: Date;
  asOf: Date;
  segments: PlanSegment[];
  filesUsed: number;
  lines: BillLine[];
  subtotalCents: number;
  totalCents: number;
  currency: string;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * The plan segments inside [start, until): the plan in effect at `start` (the last change at or before it),
 * then one segment per change inside the range. `history` in the order the changes were made.
 */
export function planSegments(history: readonly PlanChange[], start: Date, until: Date): PlanSegment[] {
  let current: PlanName | null = null;
  const segments: PlanSegment[] = [];
  let from = seconds(start);
  const to = seconds(until);
  for (const change of history) {
    const at = seconds(change.effectiveAt);
    if (at <= from) {
      // at or before the start, or in the same second as the previous change: the later one decides
      current = change.plan;
      continue;
    }
    if (at >= to) break;
    segments.push({
      plan: current,
      start: new Date(from * 1000),
      end: new Date(at * 1000),
      seconds: at - from,
    });
    current = change.plan;
    from = at;
  }
  if (to > from)
    segments.push({
      plan: current,
      start: new Date(from * 1000),
      end: new Date(to * 1000),
      seconds: to - from,
    });
  // a change to the plan already in effect does not split the segment
  const merged: PlanSegment[] = [];
  for (const s of segments) {
    const last = merged[merged.length - 1];
    if (last && last.plan === s.plan && last.end.getTime() === s.start.getTime()) {
      last.end = s.end;
      last.seconds += s.seconds;
    } else merged.push({ ...s });
  }
  return merged;
}

function utc(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('.000Z', ' UTC');
}

/** floor(a × b / c) in exact integer arithmetic. */
function prorate(a: number, b: number, c: number): number {
  return Number((BigInt(a) * BigInt(b)) / BigInt(c));
}

/** The bill of the period `periodKey` as of `asOf` (clamped into the period; the period's end for an invoice). */
export function computeBill(input: {
  periodKey: string;
  history: readonly PlanChange[];
  filesUsed: number;
  asOf: Date;
}): Bill {
  const { start, end } = periodBounds(input.periodKey);
  const asOf = new Date(Math.min(Math.max(input.asOf.getTime(), start.getTime()), end.getTime()));
  const periodSeconds = seconds(end) - seconds(start);
  const segments = planSegments(input.history, start, asOf);
  const lines: BillLine[] = [];
  for (const s of segments) {
    if (!s.plan) continue;
    const price = planLimits(s.plan).monthlyPriceCents;
    lines.push({
      kind: 'plan',
      description: `${s.plan} plan, ${utc(s.start)} to ${utc(s.end)} (${s.seconds} of ${periodSeconds} s)`,
      plan: s.plan,
      start: s.start.toISOString(),
      end: s.end.toISOString(),
      seconds: s.seconds,
      periodSeconds,
      unitCents: price,
      quantity: 1,
      amountCents: prorate(price, s.seconds, periodSeconds),
    });
  }
  const finalPlan = segments.length ? segments[segments.length - 1].plan : null;
  const filesUsed = Math.max(0, Math.trunc(input.filesUsed));
  if (finalPlan && planLimits(finalPlan).billsExcessFiles) {
    const limits = planLimits(finalPlan);
    const excess = Math.max(0, filesUsed - limits.filesPerPeriod);
    if (excess > 0)
      lines.push({
        kind: 'excess_files',
        description: `files over the ${finalPlan} quota of ${limits.filesPerPeriod}: ${excess} × ${limits.excessFileCents} cents`,
        plan: finalPlan,
        quantity: excess,
        unitCents: limits.excessFileCents,
        amountCents: excess * limits.excessFileCents,
      });
  }
  const subtotalCents = lines.reduce((sum, l) => sum + l.amountCents, 0);
  return {
    periodKey: input.periodKey,
    periodStart: start,
    periodEnd: end,
    asOf,
    segments,
    filesUsed,
    lines,
    subtotalCents,
    totalCents: subtotalCents,
    currency: CURRENCY,
  };
}

/**
 * Which companies get an invoice for a closed period (README "Billing"): never the demo company (the
 * caller leaves it out); none for a period without any time on a plan; none for a zero total (a period on
 * Free only, or a few seconds on a paid plan that round down to 0 cents).
 */
export function isBillable(bill: Bill): boolean {
  return bill.segments.some((s) => s.plan !== null) && bill.totalCents > 0;
}

/** The invoice number: the year of the period's start and the company's sequence, e.g. 2026-000001. */
export function invoiceNumber(periodStart: Date, sequence: number): string {
  return `${periodStart.getUTCFullYear()}-${String(sequence).padStart(6, '0')}`;
}
