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
  typedSql,
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

/** SQL: true when a non-null value breaks the rule. */
function failsSql(rule: BuildRule, v: string): string {
  const text = `trim(${v})`;
  const p = rule.params;
  const bounds = (x: string, min: string | number | undefined, max: string | number | undefined) =>
    [min !== undefined ? `${x} < ${min}` : null, max !== undefined ? `${x} > ${max}` : null]
      .filter(Boolean)
      .join(' OR ') || 'false';
  switch (rule.kind) {
    case 'not_null':
      return isNullSql(v);
    case 'range': {
      const x = typedSql(v, 'decimal');
      const min = p.min !== undefined ? numberSql(p.min) : undefined;
      const max = p.max !== undefined ? numberSql(p.max) : undefined;
      return `(${x}) IS NULL OR ${bounds(`(${x})`, min, max)}`;
    }
    case 'length':
      return bounds(`length(${text})`, p.min as number | undefined, p.max as number | undefined);
    case 'pattern':
      return `NOT regexp_full_match(${text}, ${literal(String(p.regex))})`;
    case 'allowed_values':
      return `${text} NOT IN (${(p.values as string[]).map((x) => literal(x)).join(', ')})`;
    case 'type':
      return `${classSql(v)} NOT IN (${CLASSES_OF[p.type as InferredType].join(', ')})`;
    default:
      throw new Error(`not a value rule: ${rule.kind}`);
  }
}

function notBlankSql(sheet: LoadedSheet, profile: SheetProfile): string {
  if (profile.blankRows === 0 || sheet.columns.length === 0) return 'true';
  return `NOT (${sheet.columns.map((c) => `${c.ident} IS NULL`).join(' AND ')})`;
}

async function evaluateColumnRule(
  conn: DuckDBConnection,
  rule: BuildRule,
  sheet: LoadedSheet,
  profile: SheetProfile,
  ident: string,
): Promise<SheetOutcome> {
  const rn = sheet.rowNumberColumn;
  const where = notBlankSql(sheet, profile);
  let sql: string;
  if (rule.kind === 'unique') {
    sql = `SELECT count(*) AS e, count(*) FILTER (WHERE k > 1) AS f, min(${rn}, ${MAX_FAILING_ROWS}) FILTER (WHERE k > 1) AS r
      FROM (SELECT ${rn}, row_number() OVER (PARTITION BY trim(${ident}) ORDER BY ${rn}) AS k
            FROM ${sheet.table} WHERE ${where} AND NOT ${isNullSql(ident)})`;
  } else {
    const evaluated = rule.kind === 'not_null' ? 'true' : `NOT ${isNullSql(ident)}`;
    const failed = `(${evaluated}) AND (${failsSql(rule, ident)})`;
    sql = `SELECT count(*) FILTER (WHERE ${evaluated}) AS e, count(*) FILTER (WHERE ${failed}) AS f,
      min(${rn}, ${MAX_FAILING_ROWS}) FILTER (WHERE ${failed}) AS r FROM ${sheet.table} WHERE ${where}`;
  }
  const row = await first(conn, sql);
  return { sheet: sheet.name, evaluatedUnits: n(row.e), failedUnits: n(row.f), failingRows: rowList(row.r) };
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

export async function evaluateRule(
  conn: DuckDBConnection,
  rule: BuildRule,
  sheets: ReadonlyArray<{ loaded: LoadedSheet; profile: SheetProfile }>,
): Promise<RuleOutcome> {
  const outcomes: SheetOutcome[] = [];
  let problem: string | undefined;
  for (const { loaded, profile } of sheets) {
    if (!isColumnKind(rule.kind)) {
      outcomes.push(rowCountOutcome(rule, profile));
      continue;
    }
    const column = loaded.columns.find((c) => c.name === rule.column);
    if (!column) continue;
    try {
      outcomes.push(await evaluateColumnRule(conn, rule, loaded, profile, column.ident));
    } catch (err) {
      // e.g. a pattern re2js accepted and DuckDB's RE2 build does not: the rule cannot run here
      problem = `the engine could not evaluate this rule: ${err instanceof Error ? err.message.split('\n')[0] : 'error'}`;
      outcomes.length = 0;
      break;
    }
  }
  const evaluatedUnits = outcomes.reduce((s, o) => s + o.evaluatedUnits, 0);
  const failedUnits = outcomes.reduce((s, o) => s + o.failedUnits, 0);
  const tolerance = decimalRatio(rule.tolerance);
  return {
    ruleId: rule.id,
    name: rule.name,
    kind: rule.kind,
    column: rule.column,
    dimension: DIMENSION_OF[rule.kind],
    severity: rule.severity,
    tolerance: Number(rule.tolerance),
    status: ruleStatus({ evaluatedUnits, failedUnits }, rule.severity, tolerance),
    evaluatedUnits,
    failedUnits,
    failingRows: outcomes.flatMap((o) => o.failingRows).slice(0, MAX_FAILING_ROWS),
    sheets: outcomes,
    ...(problem ? { problem } : {}),
  };
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
      const outcomes: RuleOutcome[] = [];
      for (const rule of rules) outcomes.push(await evaluateRule(conn, rule, sheets));
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
