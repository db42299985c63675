/**
 * The quality score (README "Quality rules and the quality score"), computed from exact integer ratios with
 * BigInt — no binary floating point anywhere between the unit counts and the rounded result.
 *
 * - per applicable rule: p = (evaluated − failed) / evaluated; a rule with 0 units is left out;
 * - a dimension's score: the plain mean of p over its applicable rules;
 * - the score: 100 × the mean of the dimension scores over the dimensions that have an applicable rule,
 *   rounded half-up to 2 decimals; null when no rule applies.
 *
 * Status comes from severity and tolerance (never from p): failed/evaluated ≤ tolerance passes, otherwise
 * an `error` rule fails and a `warn` rule warns.
 */
import type { Dimension, Severity } from './kinds';

export const DIMENSIONS: readonly Dimension[] = ['completeness', 'validity', 'uniqueness', 'volume'];

export type RuleStatus = 'passed' | 'warn' | 'failed' | 'not_applicable';

/** A non-negative exact fraction. */
export interface Ratio {
  num: bigint;
  den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

export function ratio(num: bigint | number, den: bigint | number): Ratio {
  const n = BigInt(num);
  const d = BigInt(den);
  if (d === 0n) throw new Error('ratio with a zero denominator');
  const g = gcd(n, d) || 1n;
  return { num: n / g, den: d / g };
}

function add(a: Ratio, b: Ratio): Ratio {
  return ratio(a.num * b.den + b.num * a.den, a.den * b.den);
}

function mean(values: readonly Ratio[]): Ratio {
  let sum = ratio(0, 1);
  for (const v of values) sum = add(sum, v);
  return ratio(sum.num, sum.den * BigInt(values.length));
}

/**
 * `value × scale` rounded half-up to `decimals` places, as a JSON number (the decimal string is exact;
 * Number() of a 2-decimal string gives the nearest double, which prints back as the same string).
 */
export function roundHalfUp(value: Ratio, scale = 100n, decimals = 2): number {
  const factor = 10n ** BigInt(decimals);
  const n = value.num * scale * factor;
  // floor(n / den + 1/2) for non-negative n
  const rounded = (2n * n + value.den) / (2n * value.den);
  const whole = rounded / factor;
  const frac = (rounded % factor).toString().padStart(decimals, '0');
  return Number(`${whole}.${frac}`);
}

/**
 * An exact ratio from a decimal share given as a JSON number (a tolerance such as 0.05): the number's
 * shortest decimal spelling is what the caller wrote, so 0.1 is 1/10, not the double nearest to it.
 */
export function decimalRatio(value: number | string): Ratio {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const m = /^(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!m) throw new Error(`not a non-negative decimal: ${text}`);
  const digits = `${m[1] ?? ''}${m[2] ?? ''}` || '0';
  let exp = -(m[2]?.length ?? 0) + Number(m[3] ?? 0);
  let num = BigInt(digits);
  let den = 1n;
  if (exp >= 0) num *= 10n ** BigInt(exp);
  else {
    exp = -exp;
    den = 10n ** BigInt(exp);
  }
  return ratio(num, den);
}

export interface UnitCounts {
  evaluatedUnits: number;
  failedUnits: number;
}

/** passed / warn / failed / not_applicable from the counts, the severity and the tolerance. */
export function ruleStatus(counts: UnitCounts, severity: Severity, tolerance: Ratio): RuleStatus {
  if (counts.evaluatedUnits === 0) return 'not_applicable';
  // failed/evaluated <= tolerance  ⇔  failed × den <= num × evaluated
  const within = BigInt(counts.failedUnits) * tolerance.den <= tolerance.num * BigInt(counts.evaluatedUnits);
  if (within) return 'passed';
  return severity === 'error' ? 'failed' : 'warn';
}

export interface ScoredRule extends UnitCounts {
  dimension: Dimension;
  status: RuleStatus;
}

export interface QualityScore {
  /** 0–100, 2 decimals; null when no rule applies */
  score: number | null;
  /** each dimension 0–100, 2 decimals; null when the dimension has no applicable rule */
  dimensions: Record<Dimension, number | null>;
  rulesPassed: number;
  rulesEvaluated: number;
  unitsPassed: number;
  unitsEvaluated: number;
}

export function qualityScore(rules: readonly ScoredRule[]): QualityScore {
  const applicable = rules.filter((r) => r.evaluatedUnits > 0);
  const dimensionRatios: Ratio[] = [];
  const dimensions = {} as Record<Dimension, number | null>;
  for (const dimension of DIMENSIONS) {
    const ps = applicable
      .filter((r) => r.dimension === dimension)
      .map((r) => ratio(r.evaluatedUnits - r.failedUnits, r.evaluatedUnits));
    if (ps.length === 0) {
      dimensions[dimension] = null;
      continue;
    }
    const d = mean(ps);
    dimensionRatios.push(d);
    dimensions[dimension] = roundHalfUp(d);
  }
  let unitsEvaluated = 0;
  let unitsPassed = 0;
  for (const r of applicable) {
    unitsEvaluated += r.evaluatedUnits;
    unitsPassed += r.evaluatedUnits - r.failedUnits;
  }
  return {
    score: dimensionRatios.length === 0 ? null : roundHalfUp(mean(dimensionRatios)),
    dimensions,
    rulesPassed: applicable.filter((r) => r.status === 'passed').length,
    rulesEvaluated: applicable.length,
    unitsPassed,
    unitsEvaluated,
  };
}
