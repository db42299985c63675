/**
 * Rule evaluation as an analysis step of the report pass (domain/reports/engine/types.ts): SQL over the
 * DuckDB tables the pass has loaded — the file is never read again — one statement per company rule and
 * sheet, plus the default rules computed from the profile's own counts (no extra scan).
 *
 * Units (README "Quality rules and the quality score"):
 * - entirely blank rows are not data and are left out of every rule;
 * - `not_null` and default completeness: one unit per row, a null fails (nulls as the profile counts them:
 *   empty cells and the null strings of engine/sql.ts);
 * - every other column rule: one unit per non-null value; values are compared as their text with
 *   surrounding spaces trimmed (`range` reads them as numbers: a value that is not a number fails);
 * - `unique`: every repeat of a value already seen in an earlier row fails (the first occurrence passes);
 * - `row_count`, default duplicate rows and default volume: one unit per sheet.
 * A column rule applies to every sheet that has a column of that exact name; a rule that applies nowhere,
 * or has 0 units, is `not_applicable`.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  classSql,
  isNullSql,
  literal,
  type AnalysisStep,
  type ColumnProfile,
  type InferredType,
  type LoadedSheet,
  type Profile,
  type SheetProfile,
} from '../reports/engine';
import { DIMENSION_OF, isColumnKind, type Dimension, type RuleKind, type Severity } from './kinds';
import { decimalRatio, qualityScore, ruleStatus, type QualityScore, type RuleStatus } from './score';

/** A rule as the build read it at its start (the snapshot every sheet is evaluated against). */
export interface BuildRule {
  id: string;
  name: string;
  kind: RuleKind;
  column: string | null;
  params: Record<string, unknown>;
  severity: Severity;
  /** share of failing units allowed, as the exact decimal text stored */
  tolerance: string;
}

export const MAX_FAILING_ROWS = 10;

/** The default validity rule checks a column against the narrowest type holding this share of its values. */
export const EXPECTED_TYPE_SHARE = 0.9;

export interface SheetOutcome {
  sheet: string;
  evaluatedUnits: number;
  failedUnits: number;
  /** up to 10 row numbers (as a spreadsheet shows them), never values */
  failingRows: number[];
}

export interface RuleOutcome {
  ruleId: string;
  name: string;
  kind: RuleKind;
  column: string | null;
  dimension: Dimension;
  severity: Severity;
  tolerance: number;
  status: RuleStatus;
  evaluatedUnits: number;
  failedUnits: number;
  /** up to 10 failing row numbers over all sheets, in sheet order (see `sheets` for which sheet) */
  failingRows: number[];
  sheets: SheetOutcome[];
  /** why a rule could not run (e.g. the engine refused its pattern); it is then not_applicable */
  problem?: string;
}

export interface DefaultRuleOutcome {
  rule: 'completeness' | 'validity' | 'duplicate_rows' | 'volume';
  dimension: Dimension;
  sheet: string;
  /** the column of completeness and validity; null for the sheet rules */
  column: string | null;
  /** validity: the type values are checked against */
  expectedType?: InferredType;
  status: RuleStatus;
  evaluatedUnits: number;
  failedUnits: number;
}

export interface QualitySection extends QualityScore {
  /** the company's rules that applied to this file when the build started */
  rules: RuleOutcome[];
  defaultRules: DefaultRuleOutcome[];
  /** company rules of severity `error` that failed (the `rules.failed` event's failedRuleCount) */
  failedErrorRules: number;
}

type Row = Record<string, unknown>;

async function first(conn: DuckDBConnection, sql: string): Promise<Row> {
  const reader = await conn.runAndReadAll(sql);
  return (reader.getRowObjectsJS() as Row[])[0] ?? {};
}

function n(value: unknown): number {
  return typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : 0;
}

function rowList(value: unknown): number[] {
  return Array.isArray(value) ? value.map(n) : [];
}

function numberSql(value: unknown): string {
  return `CAST(${literal(String(value as number))} AS DOUBLE)`;
}

/** The classes (engine/sql.ts CLASS_CODES) a value of `type` may fall in. */
const CLASSES_OF: Record<InferredType, number[]> = {
  integer: [1],
  decimal: [1, 2],
  boolean: [3],
  date: [4],
  datetime: [4, 5],
  text: [1, 2, 3, 4, 5, 6],
};

/**
 * SQL: true when a non-null value breaks the rule; `t` is the value's text with surrounding spaces trimmed
 * (the raw column when no cell of it has any). Each expression reads `t` once per row (`range` twice: its
 * class, then its number). `type`: the column's inferred type in the profile; when it is integer or decimal,
 * every non-null value is a number as the report classes one, and `range` casts it without testing its class
 * again (the class test was most of the counting scan: ~200 of ~280 ms for three range rules on 270k rows).
 */
function failsSql(rule: BuildRule, t: string, type?: InferredType): string {
  const p = rule.params as {
    min?: number;
    max?: number;
    regex?: string;
    values?: string[];
    type?: InferredType;
  };
  const outside = (x: string, min?: string | number, max?: string | number) => {
    if (min !== undefined && max !== undefined) return `coalesce(NOT (${x} BETWEEN ${min} AND ${max}), true)`;
    if (min !== undefined) return `coalesce(NOT (${x} >= ${min}), true)`;
    return `coalesce(NOT (${x} <= ${String(max)}), true)`;
  };
  switch (rule.kind) {
    case 'range':
      // a number as the report classes one (integer or decimal); anything else fails — infinity and `1_000`
      // too, which DuckDB's cast alone would read as numbers
      return outside(
        type === 'integer' || type === 'decimal'
          ? `TRY_CAST(${t} AS DOUBLE)`
          : `CASE WHEN ${classSql(t)} IN (1, 2) THEN TRY_CAST(${t} AS DOUBLE) END`,
        p.min !== undefined ? numberSql(p.min) : undefined,
        p.max !== undefined ? numberSql(p.max) : undefined,
      );
    case 'length':
      return outside(`length(${t})`, p.min, p.max);
    case 'pattern':
      return `NOT regexp_full_match(${t}, ${literal(String(p.regex))})`;
    case 'allowed_values':
      return `${t} NOT IN (${(p.values ?? []).map((x) => literal(x)).join(', ')})`;
    case 'type':
      return `${classSql(t)} NOT IN (${CLASSES_OF[p.type as InferredType].join(', ')})`;
    default:
      throw new Error(`not a value rule: ${rule.kind}`);
  }
}

function notBlankSql(sheet: LoadedSheet, profile: SheetProfile): string | null {
  if (profile.blankRows === 0 || sheet.columns.length === 0) return null;
  return `NOT (${sheet.columns.map((c) => `${c.ident} IS NULL`).join(' AND ')})`;
}

function dataRows(profile: SheetProfile): number {
  return profile.rows - profile.blankRows;
}

function rowCountOutcome(rule: BuildRule, profile: SheetProfile): SheetOutcome {
  const rows = dataRows(profile);
  const { min, max } = rule.params as { min?: number; max?: number };
  const fails = (min !== undefined && rows < min) || (max !== undefined && rows > max);
  return { sheet: profile.name, evaluatedUnits: 1, failedUnits: fails ? 1 : 0, failingRows: [] };
}

type SheetResult = SheetOutcome | { problem: string };

interface SheetInput {
  loaded: LoadedSheet;
  profile: SheetProfile;
}

function problemOf(err: unknown): string {
  return `the engine could not evaluate this rule: ${err instanceof Error ? err.message.split('\n')[0] : 'error'}`;
}

/**
 * Every rule on one sheet with as few scans as possible. A first cheap scan finds which of the columns the
 * rules read hold a value with surrounding spaces (only those are trimmed). Counts the profile already has
 * (rows, nulls, type classes, distinct values of a column without padded values) are taken from it; the
 * failed counts of the other value rules are aggregates of ONE scan; failing row numbers are read by a scan
 * per failing rule that stops at the 10th. A rule the engine refuses (e.g. a pattern DuckDB's RE2 rejects)
 * is found by counting rule by rule, and only that rule is left not applicable.
 */
async function evaluateSheet(
  conn: DuckDBConnection,
  rules: readonly BuildRule[],
  { loaded, profile }: SheetInput,
): Promise<Map<string, SheetResult>> {
  const results = new Map<string, SheetResult>();
  const rn = loaded.rowNumberColumn;
  const notBlank = notBlankSql(loaded, profile);
  const targets = rules.flatMap((rule) => {
    if (!isColumnKind(rule.kind)) {
      results.set(rule.id, rowCountOutcome(rule, profile));
      return [];
    }
    const column = loaded.columns.find((c) => c.name === rule.column);
    const columnProfile = profile.columnProfiles.find((c) => c.position === column?.position);
    return column && columnProfile ? [{ rule, ident: column.ident, columnProfile }] : [];
  });
  if (targets.length === 0) return results;
  const outcome = (evaluated: number, failed: number, failingRows: number[] = []): SheetOutcome => ({
    sheet: loaded.name,
    evaluatedUnits: evaluated,
    failedUnits: failed,
    failingRows,
  });
  if (profile.rows === 0) {
    for (const { rule } of targets) results.set(rule.id, outcome(0, 0));
    return results;
  }
  // which columns have a cell with surrounding spaces (one cheap scan)
  const idents = [...new Set(targets.map((x) => x.ident))];
  const paddedRow = await first(
    conn,
    `SELECT ${idents.map((v, i) => `count(*) FILTER (WHERE prefix(${v}, ' ') OR suffix(${v}, ' ')) AS p${i}`).join(', ')} FROM ${loaded.table}`,
  );
  const padded = new Set(idents.filter((_, i) => n(paddedRow[`p${i}`]) > 0));
  const text = (v: string) => (padded.has(v) ? `trim(${v})` : v);

  const scans: Array<{ rule: BuildRule; cond: string; evaluated: number; failed: number; count: boolean }> =
    [];
  for (const { rule, ident: v, columnProfile } of targets) {
    // a column without any null cell (the profile counted them) needs no null test per cell
    const notNull = columnProfile.nulls === 0 ? 'true' : `NOT ${isNullSql(v)}`;
    switch (rule.kind) {
      case 'not_null': {
        const cond = notBlank ? `${isNullSql(v)} AND ${notBlank}` : isNullSql(v);
        const failed = columnProfile.nulls - profile.blankRows;
        scans.push({ rule, cond, evaluated: dataRows(profile), failed, count: false });
        break;
      }
      case 'type': {
        const type = rule.params.type as InferredType;
        const failed = columnProfile.nonNull - fitting(columnProfile, type);
        scans.push({
          rule,
          cond: `${notNull} AND ${failsSql(rule, v)}`,
          evaluated: columnProfile.nonNull,
          failed,
          count: false,
        });
        break;
      }
      case 'unique':
        try {
          results.set(
            rule.id,
            await uniqueOutcome(
              conn,
              loaded,
              v,
              padded.has(v) ? null : columnProfile,
              columnProfile.nulls === 0,
            ),
          );
        } catch (err) {
          results.set(rule.id, { problem: problemOf(err) });
        }
        break;
      default:
        scans.push({
          rule,
          cond: `${notNull} AND ${failsSql(rule, text(v), columnProfile.inferredType)}`,
          evaluated: columnProfile.nonNull,
          failed: 0,
          count: true,
        });
    }
  }
  // 1. failed counts of the value rules: one scan
  const counted = scans.filter((x) => x.count);
  const countAll = async (items: typeof counted) => {
    const parts = items.map((x, i) => `count(*) FILTER (WHERE ${x.cond}) AS f${i}`);
    const row = await first(conn, `SELECT ${parts.join(', ')} FROM ${loaded.table}`);
    items.forEach((x, i) => (x.failed = n(row[`f${i}`])));
  };
  const refused = new Set<BuildRule>();
  if (counted.length > 0) {
    try {
      await countAll(counted);
    } catch {
      for (const item of counted) {
        try {
          await countAll([item]);
        } catch (err) {
          refused.add(item.rule);
          results.set(item.rule.id, { problem: problemOf(err) });
        }
      }
    }
  }
  // 2. up to 10 failing row numbers of each rule with failures: a scan that stops at the 10th
  for (const x of scans) {
    if (refused.has(x.rule)) continue;
    let failingRows: number[] = [];
    if (x.failed > 0) {
      const reader = await conn.runAndReadAll(
        `SELECT ${rn} AS r FROM ${loaded.table} WHERE ${x.cond} LIMIT ${MAX_FAILING_ROWS}`,
      );
      failingRows = (reader.getColumnsJS()[0] ?? []).map(n).sort((a, b) => a - b);
    }
    results.set(x.rule.id, outcome(x.evaluated, x.failed, failingRows));
  }
  return results;
}

/**
 * `unique`: every repeat of a (trimmed) value seen in an earlier row fails; the first occurrence passes.
 * For a column without padded values the counts are the profile's (non-null values − distinct values);
 * otherwise one hash aggregate over the trimmed text. Failing rows: a bounded join, only when there are repeats.
 */
async function uniqueOutcome(
  conn: DuckDBConnection,
  sheet: LoadedSheet,
  v: string,
  fromProfile: ColumnProfile | null,
  noNulls: boolean,
): Promise<SheetOutcome> {
  const rn = sheet.rowNumberColumn;
  const key = fromProfile ? v : `trim(${v})`;
  // a column without any null cell (the profile counted them) needs no null test per cell
  const values = `SELECT ${key} AS k, ${rn} AS rn FROM ${sheet.table}${noNulls ? '' : ` WHERE NOT ${isNullSql(v)}`}`;
  let evaluated: number;
  let failed: number;
  if (fromProfile) {
    evaluated = fromProfile.nonNull;
    failed = fromProfile.nonNull - fromProfile.distinct;
  } else {
    const counts = await first(
      conn,
      `SELECT coalesce(sum(c), 0) AS e, coalesce(sum(c - 1), 0) AS f FROM (SELECT k, count(*) AS c FROM (${values}) GROUP BY k)`,
    );
    evaluated = n(counts.e);
    failed = n(counts.f);
  }
  let failingRows: number[] = [];
  if (failed > 0) {
    const row = await first(
      conn,
      `WITH v AS (${values}), d AS (SELECT k, min(rn) AS first FROM v GROUP BY k HAVING count(*) > 1)
       SELECT min(v.rn, ${MAX_FAILING_ROWS}) AS r FROM v JOIN d ON v.k = d.k WHERE v.rn > d.first`,
    );
    failingRows = rowList(row.r);
  }
  return { sheet: sheet.name, evaluatedUnits: evaluated, failedUnits: failed, failingRows };
}

function ruleOutcome(rule: BuildRule, outcomes: SheetOutcome[], problem?: string): RuleOutcome {
  const evaluatedUnits = outcomes.reduce((s, o) => s + o.evaluatedUnits, 0);
  const failedUnits = outcomes.reduce((s, o) => s + o.failedUnits, 0);
  return {
    ruleId: rule.id,
    name: rule.name,
    kind: rule.kind,
    column: rule.column,
    dimension: DIMENSION_OF[rule.kind],
    severity: rule.severity,
    tolerance: Number(rule.tolerance),
    status: ruleStatus({ evaluatedUnits, failedUnits }, rule.severity, decimalRatio(rule.tolerance)),
    evaluatedUnits,
    failedUnits,
    failingRows: outcomes.flatMap((o) => o.failingRows).slice(0, MAX_FAILING_ROWS),
    sheets: outcomes,
    ...(problem ? { problem } : {}),
  };
}

/** Every rule over every sheet: per rule, the sheets that have its column, in sheet order. */
export async function evaluateRules(
  conn: DuckDBConnection,
  rules: readonly BuildRule[],
  sheets: readonly SheetInput[],
): Promise<RuleOutcome[]> {
  const perSheet: Array<Map<string, SheetResult>> = [];
  for (const sheet of sheets) perSheet.push(await evaluateSheet(conn, rules, sheet));
  return rules.map((rule) => {
    const results = perSheet.map((m) => m.get(rule.id)).filter((r): r is SheetResult => r !== undefined);
    const problem = results.find((r): r is { problem: string } => 'problem' in r);
    // a rule the engine could not run anywhere is not applicable (with the reason), never half-counted
    if (problem) return ruleOutcome(rule, [], problem.problem);
    return ruleOutcome(rule, results as SheetOutcome[]);
  });
}

const ZERO = decimalRatio(0);

/** The narrowest type (integer, decimal, boolean, date, datetime) holding ≥ 90% of the non-null values. */
export function expectedType(column: ColumnProfile): InferredType {
  const s = column.shares;
  const count = (share: number) => Math.round(share * column.nonNull);
  const holds = (k: number) => k >= EXPECTED_TYPE_SHARE * column.nonNull;
  if (column.nonNull === 0) return 'text';
  if (holds(count(s.integer))) return 'integer';
  if (holds(count(s.integer) + count(s.decimal))) return 'decimal';
  if (holds(count(s.boolean))) return 'boolean';
  if (holds(count(s.date))) return 'date';
  if (holds(count(s.date) + count(s.datetime))) return 'datetime';
  return 'text';
}

function fitting(column: ColumnProfile, type: InferredType): number {
  const count = (t: InferredType) => Math.round(column.shares[t] * column.nonNull);
  return CLASSES_OF_NAMES[type].reduce((sum, t) => sum + count(t), 0);
}

const CLASSES_OF_NAMES: Record<InferredType, InferredType[]> = {
  integer: ['integer'],
  decimal: ['integer', 'decimal'],
  boolean: ['boolean'],
  date: ['date'],
  datetime: ['date', 'datetime'],
  text: ['integer', 'decimal', 'boolean', 'date', 'datetime', 'text'],
};

/** The default rules, from the profile's counts alone. */
export function defaultRules(profile: Profile): DefaultRuleOutcome[] {
  const out: DefaultRuleOutcome[] = [];
  const make = (o: Omit<DefaultRuleOutcome, 'status'>): DefaultRuleOutcome => ({
    ...o,
    status: ruleStatus(o, 'warn', ZERO),
  });
  for (const sheet of profile.sheets) {
    const rows = dataRows(sheet);
    for (const column of sheet.columnProfiles) {
      // blank rows are null in every column: left out of completeness like every other rule
      out.push(
        make({
          rule: 'completeness',
          dimension: 'completeness',
          sheet: sheet.name,
          column: column.name,
          evaluatedUnits: rows,
          failedUnits: column.nulls - sheet.blankRows,
        }),
      );
      const type = expectedType(column);
      out.push(
        make({
          rule: 'validity',
          dimension: 'validity',
          sheet: sheet.name,
          column: column.name,
          expectedType: type,
          evaluatedUnits: column.nonNull,
          failedUnits: column.nonNull - fitting(column, type),
        }),
      );
    }
    out.push(
      make({
        rule: 'duplicate_rows',
        dimension: 'uniqueness',
        sheet: sheet.name,
        column: null,
        evaluatedUnits: rows > 0 ? 1 : 0,
        failedUnits: rows > 0 && sheet.duplicateRows > 0 ? 1 : 0,
      }),
    );
    out.push(
      make({
        rule: 'volume',
        dimension: 'volume',
        sheet: sheet.name,
        column: null,
        evaluatedUnits: 1,
        failedUnits: rows > 0 ? 0 : 1,
      }),
    );
  }
  return out;
}

export function rulesStep(rules: readonly BuildRule[]): AnalysisStep<QualitySection> {
  return {
    name: 'quality',
    async run({ conn, loaded, profile }) {
      const sheets = loaded.sheets.map((s) => ({
        loaded: s,
        profile: profile.sheets.find((p) => p.index === s.index)!,
      }));
      const outcomes = await evaluateRules(conn, rules, sheets);
      const defaults = defaultRules(profile);
      const score = qualityScore([...outcomes, ...defaults]);
      return {
        ...score,
        rules: outcomes,
        defaultRules: defaults,
        failedErrorRules: outcomes.filter((o) => o.status === 'failed').length,
      };
    },
  };
}
