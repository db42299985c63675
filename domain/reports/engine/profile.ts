import type { DuckDBConnection } from '@duckdb/node-api';
import { batches, onEach } from '../../../common/lanes';
import { classSql, knownTypedSql } from './sql';
import {
  INFERRED_TYPES,
  type ColumnProfile,
  type InferredType,
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

const QUANTILES = [0.05, 0.25, 0.5, 0.75, 0.95];

/**
 * A sheet of more columns than this is profiled in batches of columns: planning one query costs ~10–20 ms
 * (the class test alone names a dozen regular expressions), which one query per column paid a thousand times
 * over on a 1,024-column sheet (35 s for 2,000 rows). Narrower sheets keep one query per column (their value
 * tables can be large: one per query keeps each query's memory to one column's) and the summed statistics of
 * columns of few values.
 */
export const WIDE_SHEET_COLUMNS = 32;
/** columns per query of a wide sheet's value tables (step 1) */
const WIDE_VALUE_BATCH = 32;
/** typed columns per scan (step 2): one scan of hundreds of columns plans slower than several of a few */
const SCAN_BATCH = 16;

/**
 * SQL: one row per column of `batch` ([position in the sheet, column]) with its class histogram, top values
 * and text statistics, from the value tables of every column of the batch in one query (the class test
 * planned once). The same figures as the one-column query of profileSheet: the top values by count then
 * text, the text statistics over non-null values.
 */
function valueTablesSql(table: string, batch: Array<[number, { ident: string }]>): string {
  const grouped = batch
    .map(([i, c]) => `SELECT ${i} AS i, ${c.ident} AS v, count(*) AS n FROM ${table} GROUP BY 2`)
    .join(' UNION ALL ');
  return `WITH ds_values AS MATERIALIZED (SELECT i, v, n, ${classSql('v')} AS k FROM (${grouped})),
      cls AS (SELECT i, list({k: k, n: n, d: d}) AS classes FROM
        (SELECT i, k, sum(n) AS n, count(*) AS d FROM ds_values GROUP BY i, k) GROUP BY i),
      tops AS (SELECT i, list({v: v, n: n} ORDER BY n DESC, v) AS top FROM
        (SELECT i, v, n FROM ds_values WHERE k > 0 QUALIFY row_number() OVER (PARTITION BY i ORDER BY n DESC, v) <= ${TOP_VALUES})
        GROUP BY i),
      txt AS (SELECT i, {min: min(v), max: max(v), lmin: min(length(v)), lmax: max(length(v)),
        lmean: sum(length(v) * n) / sum(n)} AS text FROM ds_values WHERE k > 0 GROUP BY i)
    SELECT cls.i, classes, top, text FROM cls LEFT JOIN tops ON tops.i = cls.i LEFT JOIN txt ON txt.i = cls.i`;
}

/**
 * SQL: the typed statistics of one column (named with the suffix `i`, as the scan's are) from its grouped
 * values: each distinct text once, with its count. Numbers: min, max, the mean and the sample standard
 * deviation weighted by the counts (two passes: the deviations from the mean), zeros, negatives and the
 * quantiles exactly as quantile_cont takes them (position h = (rows − 1)·p, linear between the values at
 * floor(h) and ceil(h)): the value at a position is the greatest whose rows before it are at most that position.
 */
function groupedStatsSql(table: string, ident: string, type: InferredType, i: number): string {
  const values = `SELECT ${knownTypedSql('v', type)} AS x, n FROM (SELECT ${ident} AS v, count(*) AS n FROM ${table} GROUP BY 1)`;
  if (type !== 'integer' && type !== 'decimal') {
    return `SELECT min(x) AS min${i}, max(x) AS max${i} FROM (${values})`;
  }
  const at = (pos: string) => `max(x) FILTER (WHERE below <= ${pos})`;
  const quantiles = QUANTILES.map((p, k) => {
    const h = `((c - 1)::DOUBLE * ${p})`;
    return `${at(`floor(${h})`)} AS lo${k}, ${at(`ceil(${h})`)} AS hi${k}, any_value(${h} - floor(${h})) AS f${k}`;
  });
  const interpolated = QUANTILES.map((_, k) => `lo${k}::DOUBLE + f${k} * (hi${k}::DOUBLE - lo${k}::DOUBLE)`);
  return `WITH d AS MATERIALIZED (${values}),
      s AS (SELECT x, n, sum(n) OVER (ORDER BY x ROWS UNBOUNDED PRECEDING) - n AS below FROM d WHERE x IS NOT NULL),
      tot AS (SELECT sum(n) AS c, sum(x::DOUBLE * n) / sum(n) AS mean FROM s)
    SELECT min${i}, max${i}, mean${i}, sd${i}, zeros${i}, neg${i}, [${interpolated.join(', ')}] AS q${i} FROM (
      SELECT min(x) AS min${i}, max(x) AS max${i}, any_value(mean) AS mean${i},
        CASE WHEN any_value(c) > 1 THEN sqrt(sum(n * (x::DOUBLE - mean) * (x::DOUBLE - mean)) / (any_value(c) - 1)) END AS sd${i},
        coalesce(sum(n) FILTER (WHERE x = 0), 0) AS zeros${i}, coalesce(sum(n) FILTER (WHERE x < 0), 0) AS neg${i},
        ${quantiles.join(', ')}
      FROM s, tot)`;
}

async function profileSheet(
  conn: DuckDBConnection,
  sheet: LoadedSheet,
  other: DuckDBConnection | undefined,
  wideColumns: number,
): Promise<SheetProfile> {
  // the queries of one step (one per column) run on both connections at once when there are two: each
  // query's planning and its single-threaded parts overlap the other's work
  const t = sheet.table;
  const cols = sheet.columns;
  // 1. per column, one hash aggregate: its distinct values with their counts, each value classified once
  // (not once per cell); the class histogram, nulls, distinct count, top values and the text statistics
  // come from that small table
  const classCounts: Array<Record<InferredType, number>> = cols.map(() => ({
    integer: 0,
    decimal: 0,
    boolean: 0,
    date: 0,
    datetime: 0,
    text: 0,
  }));
  const nulls: number[] = cols.map(() => sheet.rowCount);
  const distinct: number[] = cols.map(() => 0);
  const top: Array<Array<{ value: string; count: number }>> = cols.map(() => []);
  const textStats: Row[] = cols.map(() => ({}));
  const conns = other ? [conn, other] : [conn];
  const take = (i: number, r: Row) => {
    nulls[i] = 0;
    for (const k of (r.classes as Row[] | null) ?? []) {
      const code = num(k.k);
      if (code === 0) nulls[i] = num(k.n);
      else {
        classCounts[i][INFERRED_TYPES[code - 1]] = num(k.n);
        distinct[i] += num(k.d);
      }
    }
    top[i] = ((r.top as Row[] | null) ?? []).map((x) => ({ value: clip(String(x.v)), count: num(x.n) }));
    if (inferType(classCounts[i]) === 'text' && distinct[i] > 0) textStats[i] = r.text as Row;
  };
  const wide = cols.length > wideColumns;
  if (sheet.rowCount > 0 && wide) {
    await onEach(conns, batches([...cols.entries()], WIDE_VALUE_BATCH), async (cn, batch) => {
      for (const r of await rows(cn, valueTablesSql(t, batch))) take(num(r.i), r);
    });
  } else if (sheet.rowCount > 0) {
    await onEach(conns, [...cols.entries()], async (cn, [i, c]) => {
      // one query per column: the value table is built once (a materialised CTE) and read three times
      const [r] = await rows(
        cn,
        `WITH ds_values AS MATERIALIZED (
           SELECT v, n, ${classSql('v')} AS k FROM (SELECT ${c.ident} AS v, count(*) AS n FROM ${t} GROUP BY 1))
         SELECT
           (SELECT list({k: k, n: n, d: d}) FROM (SELECT k, sum(n) AS n, count(*) AS d FROM ds_values GROUP BY k)) AS classes,
           (SELECT list({v: v, n: n} ORDER BY n DESC, v) FROM
              (SELECT v, n FROM ds_values WHERE k > 0 ORDER BY n DESC, v LIMIT ${TOP_VALUES})) AS top,
           (SELECT {min: min(v), max: max(v), lmin: min(length(v)), lmax: max(length(v)),
              lmean: sum(length(v) * n) / sum(n)} FROM ds_values WHERE k > 0) AS text`,
      );
      take(i, r);
    });
  }
  const types = classCounts.map(inferType);

  // 2. typed statistics of the other columns. Every non-null value of a column is of its inferred type (that
  // is how the type was chosen), so a plain cast is enough; typedSql guards the class. A column with few
  // distinct values (at most a quarter of the rows) is summed from its grouped values, weighted by their
  // counts (a small table: the exact quantiles by running counts instead of a sort of every row); the others
  // in one scan of the table.
  const stats: Row = {};
  const typed = cols.map((c, i) => ({ c, i, type: types[i] })).filter((x) => x.type !== 'text');
  // (not on a wide sheet: a query per such column would cost what the batches save)
  const fewValues = ({ i }: { i: number }) => !wide && distinct[i] * 4 <= sheet.rowCount;
  const grouped = typed.filter(fewValues);
  const scanned = typed.filter((x) => !fewValues(x));
  // the grouped columns, the scan of the others and the duplicate rows (step 4) are independent queries
  const steps: Array<(cn: DuckDBConnection) => Promise<void>> = [];
  if (sheet.rowCount > 0) {
    for (const { c, i, type } of grouped) {
      steps.push(async (cn) => {
        const [r] = await rows(cn, groupedStatsSql(t, c.ident, type, i));
        Object.assign(stats, r);
      });
    }
  }
  for (const batch of sheet.rowCount > 0 ? batches(scanned, SCAN_BATCH) : []) {
    const parts: string[] = [];
    const values: string[] = [];
    for (const { c, i, type } of batch) {
      const v = `x${i}`;
      values.push(`${knownTypedSql(c.ident, type)} AS ${v}`);
      if (type === 'integer' || type === 'decimal') {
        parts.push(
          `min(${v}) AS min${i}`,
          `max(${v}) AS max${i}`,
          `avg(${v}::DOUBLE) AS mean${i}`,
          `stddev_samp(${v}::DOUBLE) AS sd${i}`,
          `quantile_cont(${v}::DOUBLE, [${QUANTILES.join(', ')}]) AS q${i}`,
          `count(*) FILTER (WHERE ${v} = 0) AS zeros${i}`,
          `count(*) FILTER (WHERE ${v} < 0) AS neg${i}`,
        );
      } else {
        parts.push(`min(${v}) AS min${i}`, `max(${v}) AS max${i}`);
      }
    }
    // first: the longest of the steps
    steps.unshift(async (cn) => {
      const [r] = await rows(cn, `SELECT ${parts.join(', ')} FROM (SELECT ${values.join(', ')} FROM ${t})`);
      Object.assign(stats, r);
    });
  }
  textStats.forEach((r, i) => {
    if (types[i] !== 'text') return;
    stats[`min${i}`] = r.min;
    stats[`max${i}`] = r.max;
    stats[`lmin${i}`] = r.lmin;
    stats[`lmax${i}`] = r.lmax;
    stats[`lmean${i}`] = r.lmean;
  });

  // 4. duplicate rows: rows equal in every column to an earlier one (blank rows left out). A column whose
  // every cell holds a value of its own (no null, as many distinct values as rows: an id) already says
  // there is none, and no blank row either: the grouping of whole rows is skipped
  let duplicateRows = 0;
  let blankRows = 0;
  const keyColumn = cols.some((_, i) => nulls[i] === 0 && distinct[i] === sheet.rowCount);
  if (cols.length > 0 && sheet.rowCount > 0 && !keyColumn) {
    const all = cols.map((c) => c.ident).join(', ');
    const blank = cols.map((c) => `${c.ident} IS NULL`).join(' AND ');
    steps.unshift(async (cn) => {
      const [d] = await rows(
        cn,
        `SELECT coalesce(sum(n - 1) FILTER (WHERE NOT b), 0) AS dup, coalesce(sum(n) FILTER (WHERE b), 0) AS blank
         FROM (SELECT ${blank} AS b, count(*) AS n FROM ${t} GROUP BY ${all})`,
      );
      duplicateRows = num(d.dup);
      blankRows = num(d.blank);
    });
  } else if (cols.length === 0) {
    blankRows = sheet.rowCount;
  }
  await onEach(conns, steps, (cn, step) => step(cn));

  const columnProfiles: ColumnProfile[] = cols.map((c, i) => {
    const type = types[i];
    const nonNull = sheet.rowCount - nulls[i];
    const shares = Object.fromEntries(
      INFERRED_TYPES.map((k) => [k, nonNull === 0 ? 0 : classCounts[i][k] / nonNull]),
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
      nulls: nulls[i],
      nonNull,
      shares,
      distinct: distinct[i],
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
      topValues: top[i],
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

/**
 * The profile of every sheet of a loaded version (./types.ts documents each statistic). `wideColumns`: above
 * it a sheet is profiled in batches of columns (WIDE_SHEET_COLUMNS; a test sets it to compare both ways).
 */
export async function profileVersion(
  conn: DuckDBConnection,
  loaded: LoadedVersion,
  other?: DuckDBConnection,
  wideColumns = WIDE_SHEET_COLUMNS,
): Promise<Profile> {
  const sheets: SheetProfile[] = [];
  for (const sheet of loaded.sheets) sheets.push(await profileSheet(conn, sheet, other, wideColumns));
  return { format: loaded.format, sheets };
}
