import type { DuckDBConnection } from '@duckdb/node-api';
import { classSql, knownTypedSql } from './sql';
import {
  INFERRED_TYPES,
  type ColumnProfile,
  type InferredType,
  type LoadedColumn,
  type LoadedSheet,
  type LoadedVersion,
  type Profile,
  type SheetProfile,
} from './types';

const TOP_VALUES = 10;
/** Texts shown in a profile (top values, text min and max) are cut to this many characters. */
export const VALUE_MAX_CHARS = 200;

function clip(text: string): string {
  return text.length > VALUE_MAX_CHARS ? text.slice(0, VALUE_MAX_CHARS) : text;
}

type Row = Record<string, unknown>;

async function rows(conn: DuckDBConnection, sql: string): Promise<Row[]> {
  const reader = await conn.runAndReadAll(sql);
  return reader.getRowObjectsJS() as Row[];
}

function num(value: unknown): number {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return value;
  if (value === null || value === undefined) return 0;
  return Number(value);
}

function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

/** The narrowest type that holds every non-null value (./sql.ts documents the classes). */
export function inferType(counts: Record<InferredType, number>): InferredType {
  const nonNull = INFERRED_TYPES.reduce((sum, t) => sum + counts[t], 0);
  if (nonNull === 0) return 'text';
  if (counts.integer === nonNull) return 'integer';
  if (counts.integer + counts.decimal === nonNull) return 'decimal';
  if (counts.boolean === nonNull) return 'boolean';
  if (counts.date === nonNull) return 'date';
  if (counts.date + counts.datetime === nonNull) return 'datetime';
  return 'text';
}

function isoOf(value: unknown, type: InferredType): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) {
    const iso = value.toISOString();
    return type === 'date' ? iso.slice(0, 10) : iso;
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * A numeric column's value table (its distinct texts with counts, each classified once) above this many
 * rows is not read into JavaScript: its statistics come from one scan of the sheet instead.
 */
export const SMALL_VALUE_TABLE = 20_000;

interface ColumnFacts {
  classes: Record<InferredType, number>;
  nulls: number;
  distinct: number;
  top: Array<{ value: string; count: number }>;
  /** min, max (and, numeric, mean, sd, q, zeros, neg; text: lmin, lmax, lmean) keyed without the index */
  stats: Row;
  /** numeric with a large value table: its statistics come from the sheet scan */
  scan: boolean;
}

/** Exact quantile with linear interpolation (pandas' default) over sorted distinct values with counts. */
function weightedQuantile(xs: number[], counts: number[], total: number, p: number): number {
  const h = (total - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  const at = (position: number): number => {
    let seen = 0;
    for (let j = 0; j < xs.length; j++) {
      seen += counts[j];
      if (position < seen) return xs[j];
    }
    return xs[xs.length - 1];
  };
  const a = at(lo);
  return hi === lo ? a : a + (h - lo) * (at(hi) - a);
}

/** Numeric statistics from the sorted distinct values with counts (the value table, small). */
function numericStats(xs: number[], counts: number[]): Row {
  let total = 0;
  let sum = 0;
  let zeros = 0;
  let neg = 0;
  for (let j = 0; j < xs.length; j++) {
    total += counts[j];
    sum += xs[j] * counts[j];
    if (xs[j] === 0) zeros += counts[j];
    else if (xs[j] < 0) neg += counts[j];
  }
  if (total === 0) return { zeros: 0, neg: 0 };
  const mean = sum / total;
  let squares = 0;
  for (let j = 0; j < xs.length; j++) squares += counts[j] * (xs[j] - mean) ** 2;
  return {
    min: xs[0],
    max: xs[xs.length - 1],
    mean,
    sd: total > 1 ? Math.sqrt(squares / (total - 1)) : null,
    q: [0.05, 0.25, 0.5, 0.75, 0.95].map((p) => weightedQuantile(xs, counts, total, p)),
    zeros,
    neg,
  };
}

/**
 * One column from its value table (a temporary table of the connection: its distinct texts with their
 * counts, each classified once — not once per cell): the class histogram, nulls, distinct count, top
 * values, text statistics, and the typed statistics when the table is small (numbers) or always (dates,
 * datetimes, booleans: min and max only).
 */
async function profileColumn(
  conn: DuckDBConnection,
  table: string,
  column: LoadedColumn,
  position: number,
  rowCount: number,
  smallValueTable: number,
): Promise<ColumnFacts> {
  const facts: ColumnFacts = {
    classes: { integer: 0, decimal: 0, boolean: 0, date: 0, datetime: 0, text: 0 },
    nulls: rowCount,
    distinct: 0,
    top: [],
    stats: {},
    scan: false,
  };
  if (rowCount === 0) return facts;
  const vt = `${table}_values_${position}`;
  await conn.run(
    `CREATE OR REPLACE TABLE ${vt} AS
       SELECT v, n, ${classSql('v')}::TINYINT AS k FROM (SELECT ${column.ident} AS v, count(*) AS n FROM ${table} GROUP BY 1)`,
  );
  let keep = false;
  try {
    const [r] = await rows(
      conn,
      `SELECT
         (SELECT list({k: k, n: n, d: d}) FROM (SELECT k, sum(n) AS n, count(*) AS d FROM ${vt} GROUP BY k)) AS classes,
         (SELECT list({v: v, n: n} ORDER BY n DESC, v) FROM
            (SELECT v, n FROM ${vt} WHERE k > 0 ORDER BY n DESC, v LIMIT ${TOP_VALUES})) AS top`,
    );
    facts.nulls = 0;
    let valueRows = 0;
    for (const k of (r.classes as Row[] | null) ?? []) {
      valueRows += num(k.d);
      const code = num(k.k);
      if (code === 0) facts.nulls = num(k.n);
      else {
        facts.classes[INFERRED_TYPES[code - 1]] = num(k.n);
        facts.distinct += num(k.d);
      }
    }
    facts.top = ((r.top as Row[] | null) ?? []).map((x) => ({ value: clip(String(x.v)), count: num(x.n) }));
    // a small value table stays for the steps (LoadedColumn.valueTable); a large one is dropped now
    keep = valueRows <= smallValueTable;
    if (facts.distinct === 0) return facts;
    const type = inferType(facts.classes);
    if (type === 'text') {
      const [s] = await rows(
        conn,
        `SELECT min(v) AS min, max(v) AS max, min(length(v)) AS lmin, max(length(v)) AS lmax,
           sum(length(v) * n) / sum(n) AS lmean FROM ${vt} WHERE k > 0`,
      );
      facts.stats = s;
    } else if (type === 'integer' || type === 'decimal') {
      if (facts.distinct > smallValueTable) facts.scan = true;
      else {
        // every non-null value is of the column's type (that is how it was chosen): a plain cast
        const values = await rows(
          conn,
          `SELECT x, sum(n)::BIGINT AS n FROM (SELECT ${knownTypedSql('v', type)}::DOUBLE AS x, n FROM ${vt} WHERE k > 0)
           WHERE x IS NOT NULL GROUP BY x ORDER BY x`,
        );
        facts.stats = numericStats(
          values.map((x) => num(x.x)),
          values.map((x) => num(x.n)),
        );
        if (type === 'integer' && values.length > 0) {
          // integers beyond 2^53: min and max as the scan gives them (BIGINT, then a JS number)
          const [m] = await rows(
            conn,
            `SELECT min(x) AS min, max(x) AS max FROM (SELECT ${knownTypedSql('v', type)} AS x FROM ${vt} WHERE k > 0)`,
          );
          facts.stats.min = m.min;
          facts.stats.max = m.max;
        }
      }
    } else {
      const [m] = await rows(
        conn,
        `SELECT min(x) AS min, max(x) AS max FROM (SELECT ${knownTypedSql('v', type)} AS x FROM ${vt} WHERE k > 0)`,
      );
      facts.stats = m;
    }
    return facts;
  } finally {
    if (keep) column.valueTable = vt;
    else {
      column.valueTable = undefined;
      await conn.run(`DROP TABLE IF EXISTS ${vt}`);
    }
  }
}

/**
 * Duplicate rows (equal in every column to an earlier row, blank rows left out) and blank rows. A hash of
 * each row finds the candidates; rows whose hash repeats are then grouped on every column, so the count
 * is exact (a hash collision of two different rows is not counted).
 */
async function duplicates(
  conn: DuckDBConnection,
  table: string,
  cols: LoadedColumn[],
): Promise<{ duplicateRows: number; blankRows: number }> {
  const all = cols.map((c) => c.ident).join(', ');
  const blank = cols.map((c) => `${c.ident} IS NULL`).join(' AND ');
  const [d] = await rows(
    conn,
    `SELECT coalesce(sum(n) FILTER (WHERE b), 0) AS blank, count(*) FILTER (WHERE NOT b AND n > 1) AS repeated
     FROM (SELECT h, b, count(*) AS n FROM (SELECT hash(${all}) AS h, ${blank} AS b FROM ${table}) GROUP BY h, b)`,
  );
  let duplicateRows = 0;
  if (num(d.repeated) > 0) {
    const [x] = await rows(
      conn,
      `WITH hashed AS (SELECT hash(${all}) AS h, * FROM ${table} WHERE NOT (${blank})),
         repeated AS (SELECT h FROM hashed GROUP BY h HAVING count(*) > 1)
       SELECT coalesce(sum(n - 1), 0) AS dup FROM
         (SELECT count(*) AS n FROM hashed WHERE h IN (SELECT h FROM repeated) GROUP BY ${all})`,
    );
    duplicateRows = num(x.dup);
  }
  return { duplicateRows, blankRows: num(d.blank) };
}

/** Runs the tasks on the connections, each connection taking the next task when it is free. */
async function onConnections(
  conns: DuckDBConnection[],
  tasks: Array<(conn: DuckDBConnection) => Promise<void>>,
): Promise<void> {
  let next = 0;
  let failed = false;
  await Promise.all(
    conns.map(async (conn) => {
      try {
        while (!failed && next < tasks.length) await tasks[next++](conn);
      } catch (err) {
        failed = true; // the other connections stop after their current task
        throw err;
      }
    }),
  );
}

async function profileSheet(
  conns: DuckDBConnection[],
  sheet: LoadedSheet,
  smallValueTable: number,
): Promise<SheetProfile> {
  const t = sheet.table;
  const cols = sheet.columns;
  const facts: ColumnFacts[] = new Array<ColumnFacts>(cols.length);
  let duplicateRows = 0;
  let blankRows = cols.length === 0 ? sheet.rowCount : 0;
  // 1. per column, its value table; and the duplicate rows: independent queries, shared between the
  // connections (DuckDB runs them side by side)
  const tasks: Array<(conn: DuckDBConnection) => Promise<void>> = [];
  if (cols.length > 0 && sheet.rowCount > 0) {
    tasks.push(async (conn) => {
      ({ duplicateRows, blankRows } = await duplicates(conn, t, cols));
    });
  }
  cols.forEach((c, i) =>
    tasks.push(async (conn) => {
      facts[i] = await profileColumn(conn, t, c, i + 1, sheet.rowCount, smallValueTable);
    }),
  );
  await onConnections(conns, tasks);
  const types = facts.map((f) => inferType(f.classes));

  // 2. numeric columns with many distinct values: their statistics in one scan of the sheet
  const stats: Row = {};
  facts.forEach((f, i) => {
    for (const [key, value] of Object.entries(f.stats)) stats[`${key}${i}`] = value;
  });
  const scanned = cols.map((c, i) => ({ c, i, type: types[i] })).filter((x) => facts[x.i].scan);
  if (scanned.length > 0) {
    const parts: string[] = [];
    const values: string[] = [];
    for (const { c, i, type } of scanned) {
      const v = `x${i}`;
      values.push(`${knownTypedSql(c.ident, type)} AS ${v}`);
      parts.push(
        `min(${v}) AS min${i}`,
        `max(${v}) AS max${i}`,
        `avg(${v}::DOUBLE) AS mean${i}`,
        `stddev_samp(${v}::DOUBLE) AS sd${i}`,
        `quantile_cont(${v}::DOUBLE, [0.05, 0.25, 0.5, 0.75, 0.95]) AS q${i}`,
        `count(*) FILTER (WHERE ${v} = 0) AS zeros${i}`,
        `count(*) FILTER (WHERE ${v} < 0) AS neg${i}`,
      );
    }
    const [r] = await rows(
      conns[0],
      `SELECT ${parts.join(', ')} FROM (SELECT ${values.join(', ')} FROM ${t})`,
    );
    Object.assign(stats, r);
  }

  const columnProfiles: ColumnProfile[] = cols.map((c, i) => {
    const type = types[i];
    const { nulls, distinct, top } = facts[i];
    const nonNull = sheet.rowCount - nulls;
    const shares = Object.fromEntries(
      INFERRED_TYPES.map((k) => [k, nonNull === 0 ? 0 : facts[i].classes[k] / nonNull]),
    ) as Record<InferredType, number>;
    const numeric = type === 'integer' || type === 'decimal';
    const q = stats[`q${i}`] as unknown[] | null | undefined;
    const hasValues = nonNull > 0;
    let min: number | string | boolean | null = null;
    let max: number | string | boolean | null = null;
    if (hasValues) {
      if (numeric) {
        min = numOrNull(stats[`min${i}`]);
        max = numOrNull(stats[`max${i}`]);
      } else if (type === 'boolean') {
        min = (stats[`min${i}`] as boolean | null) ?? null;
        max = (stats[`max${i}`] as boolean | null) ?? null;
      } else if (type === 'text') {
        const lo = stats[`min${i}`] as string | null | undefined;
        const hi = stats[`max${i}`] as string | null | undefined;
        min = typeof lo === 'string' ? clip(lo) : null;
        max = typeof hi === 'string' ? clip(hi) : null;
      } else {
        min = isoOf(stats[`min${i}`], type);
        max = isoOf(stats[`max${i}`], type);
      }
    }
    return {
      name: c.name,
      position: c.position,
      inferredType: type,
      count: sheet.rowCount,
      nulls,
      nonNull,
      shares,
      distinct,
      min,
      max,
      mean: numeric && hasValues ? numOrNull(stats[`mean${i}`]) : null,
      stddev: numeric && hasValues ? numOrNull(stats[`sd${i}`]) : null,
      quantiles:
        numeric && hasValues && Array.isArray(q)
          ? { p5: num(q[0]), p25: num(q[1]), p50: num(q[2]), p75: num(q[3]), p95: num(q[4]) }
          : null,
      zeros: numeric ? num(stats[`zeros${i}`]) : null,
      negatives: numeric ? num(stats[`neg${i}`]) : null,
      length:
        type === 'text' && hasValues
          ? {
              min: num(stats[`lmin${i}`]),
              max: num(stats[`lmax${i}`]),
              mean: num(stats[`lmean${i}`]),
            }
          : null,
      topValues: top,
    };
  });

  return {
    name: sheet.name,
    index: sheet.index,
    rows: sheet.rowCount,
    columns: cols.length,
    duplicateRows,
    blankRows,
    warnings: sheet.warnings,
    columnProfiles,
  };
}

/** The profile of every sheet of a loaded version (./types.ts documents each statistic). */
export async function profileVersion(
  conn: DuckDBConnection,
  loaded: LoadedVersion,
  opts: {
    /** more connections to the same database: the per-column queries are shared between them */
    others?: DuckDBConnection[];
    /** SMALL_VALUE_TABLE (tests set it to 0 to take every numeric column through the scan) */
    smallValueTable?: number;
  } = {},
): Promise<Profile> {
  const conns = [conn, ...(opts.others ?? [])];
  const sheets: SheetProfile[] = [];
  for (const sheet of loaded.sheets)
    sheets.push(await profileSheet(conns, sheet, opts.smallValueTable ?? SMALL_VALUE_TABLE));
  return { format: loaded.format, sheets };
}
