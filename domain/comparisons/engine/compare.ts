/**
 * The comparison engine (issue 14): two stored versions loaded into ONE DuckDB database by the reports
 * engine's `loadVersion` (table prefixes `b_` and `t_`; a CSV read `lazy` is a view over its downloaded
 * copy, scanned again by each step rather than held), compared sheet by sheet in SQL. Nothing is held in
 * JavaScript but the summary and one chunk of changes at a time; in DuckDB, per version, one small table
 * (row number, typed key, one hash of the other shared cells) and the rows read back for the pairs whose
 * hashes differ: the pairing is a hash join DuckDB spills to disk under its memory_limit.
 *
 * Rules (README "Comparisons" repeats them):
 * - Sheets: two single-sheet versions are compared with each other whatever their names (a CSV's sheet is
 *   called `CSV`, a TSV's `TSV`); otherwise sheets are paired by exact name, the others are listed as
 *   sheetsAdded / sheetsRemoved (their rows count in no total).
 * - Columns: by header name. Rows are compared on the shared columns only; an added or removed column is a
 *   schema change, not a change of every row. Column order and row order do not matter.
 * - Values: each shared column is compared under one type: the inferred type when both versions agree;
 *   integer + decimal → decimal; date + datetime → datetime; any other mix → text. Under integer/decimal a
 *   value is its number (`1`, `1.0`, `01`, ` 1 ` are equal); boolean: true/yes vs false/no (any case);
 *   date/datetime: the instant in UTC (`2024-01-01` equals `2024-01-01 00:00`, an offset is applied);
 *   text: the exact text (a trailing space IS a change; `a` vs `A` is a change). Every null form (empty,
 *   `null`, `NA`, `n/a`, `#N/A`, `NaN`, spaces only) equals every other.
 * - Matching: `keyColumns` when given; else an inferred key: the first shared column that is non-null and
 *   unique (under its comparison type) in both versions, blank rows (every cell empty) left out, both with
 *   rows that are not blank, candidates ordered: named `id`;
 *   then names ending in id/uuid/guid/key/code (`customer_id`, `orderId`, `SKU code`); then the others;
 *   ties by position in the target. Else whole-row matching as multisets over the shared columns (`changed`
 *   is 0). Rows with the same key (or identical whole rows) pair in row-number order: the 1st occurrence in
 *   base with the 1st in target, the 2nd with the 2nd, …; the extra occurrences are added or removed. No row
 *   is ever dropped: added + changed + unchanged = target rows, removed + changed + unchanged = base rows.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { batches } from '../../../common/lanes';
import { classSql, inferType, isNullSql, LAZY_FIRST_ROW, tooManyRows } from '../../reports/engine';
import { knownTypedSql, literal, notationCellSql } from '../../reports/engine/sql';
import {
  INFERRED_TYPES,
  type InferredType,
  type LoadedColumn,
  type LoadedSheet,
  type LoadedVersion,
} from '../../reports/engine/types';
import {
  MissingKeyColumn,
  UncheckedReadFailed,
  type ComparisonSummary,
  type Matching,
  type SheetComparison,
  type TypeChange,
} from './types';
import { stageLines } from './lines';

/** The table the lines of a read-back table are staged in (./lines.ts), dropped with it. */
/** A lazy view's first data row (`LoadedSheet.firstRow`): its raw twin and its copy's lines number from it. */
function firstRowOf(sheet: LoadedSheet): number {
  return sheet.firstRow ?? LAZY_FIRST_ROW;
}

function linesTable(readBack: string): string {
  return `${readBack}_lines`;
}

/** Inferred types per sheet (by index of `loaded.sheets`), per column (by position − 1). */
export type SheetTypes = InferredType[][];

export interface CompareOptions {
  keyColumns?: string[];
  /**
   * receives the row changes in chunks, in sheet order then row order (awaited: back-pressure), each the
   * JSON text of a RowChange
   */
  onChanges?: (changes: string[]) => Promise<void> | void;
  /** called between steps with the sheets done so far */
  onProgress?: (progress: { sheetsDone: number; sheetsTotal: number; phase: string }) => void;
  signal?: AbortSignal;
  /**
   * another connection to the same database: the steps done once per version (their pass over it) run on
   * both connections at once
   */
  other?: DuckDBConnection;
  /** an `unchecked` sheet counted longer than this fails with `too_many_rows` (others were counted by the load) */
  maxRows?: number;
}

type Row = Record<string, unknown>;

async function rows(conn: DuckDBConnection, sql: string): Promise<Row[]> {
  const reader = await conn.runAndReadAll(sql);
  return reader.getRowObjectsJS() as Row[];
}

/**
 * Runs the base's and the target's step together when a second connection is given (else one after the
 * other); both settle before an error is thrown, so nothing still runs when the caller cleans up. When both
 * versions' first passes are refused (UncheckedReadFailed), the error names both (one after the other, the
 * base's is thrown first and the caller finds the target's at its next try).
 */
async function perVersion<T>(
  conn: DuckDBConnection,
  other: DuckDBConnection | undefined,
  base: (c: DuckDBConnection) => Promise<T>,
  target: (c: DuckDBConnection) => Promise<T>,
): Promise<[T, T]> {
  if (!other) return [await base(conn), await target(conn)];
  const [b, t] = await Promise.allSettled([base(conn), target(other)]);
  if (
    b.status === 'rejected' &&
    t.status === 'rejected' &&
    b.reason instanceof UncheckedReadFailed &&
    t.reason instanceof UncheckedReadFailed
  )
    throw new UncheckedReadFailed(['base', 'target']);
  if (b.status === 'rejected') throw b.reason;
  if (t.status === 'rejected') throw t.reason;
  return [b.value, t.value];
}

function num(value: unknown): number {
  return typeof value === 'bigint' ? Number(value) : Number(value ?? 0);
}

/** columns whose types `inferTypes` takes in one query */
const TYPE_BATCH = 32;

/**
 * The inferred types of every column of a loaded version, by the reports engine's own rule (`inferType`
 * over the class of every cell): used when a version has no ready report to take them from. A lazy load
 * that classified its cells (`LoadedSheet.classes`) is not read again.
 */
export async function inferTypes(conn: DuckDBConnection, loaded: LoadedVersion): Promise<SheetTypes> {
  const out: SheetTypes = [];
  for (const sheet of loaded.sheets) {
    const cols = sheet.columns;
    if (cols.length === 0 || sheet.rowCount === 0) {
      out.push(cols.map(() => 'text'));
      continue;
    }
    if (sheet.classes) {
      // a lazy load classified every cell in its checking pass (the same classes, so the same rule)
      const bits = sheet.classes;
      out.push(
        cols.map((_, i) =>
          inferType(
            Object.fromEntries(INFERRED_TYPES.map((t, k) => [t, (bits[i] >> (k + 1)) & 1])) as Record<
              InferredType,
              number
            >,
          ),
        ),
      );
      continue;
    }
    // each distinct text is classified once: the type is the narrowest class holding every value, so
    // counting distinct texts per class decides it as counting cells would. Columns go TYPE_BATCH to a
    // query: planning the class test costs ~10 ms a query (a dozen regular expressions), which one query per
    // column paid a thousand times on a 1,024-column sheet
    const r: Row = {};
    for (const batch of batches([...cols.entries()], TYPE_BATCH)) {
      const distinct = batch
        .map(([i, c]) => `SELECT DISTINCT ${i} AS i, ${c.ident} AS v FROM ${sheet.table}`)
        .join(' UNION ALL ');
      for (const h of await rows(
        conn,
        `SELECT i, histogram(${classSql('v')}) AS h FROM (${distinct}) GROUP BY i`,
      )) {
        r[`h${num(h.i)}`] = h.h;
      }
    }
    out.push(
      cols.map((_, i) => {
        const counts: Record<InferredType, number> = {
          integer: 0,
          decimal: 0,
          boolean: 0,
          date: 0,
          datetime: 0,
          text: 0,
        };
        const histogram = (r[`h${i}`] ?? []) as Array<{ key: number; value: unknown }>;
        for (const { key, value } of histogram) if (key > 0) counts[INFERRED_TYPES[key - 1]] = num(value);
        return inferType(counts);
      }),
    );
  }
  return out;
}

/** The type two versions' values of a column are compared under. */
export function comparisonType(a: InferredType, b: InferredType): InferredType {
  if (a === b) return a;
  const pair = new Set([a, b]);
  if (pair.has('integer') && pair.has('decimal')) return 'decimal';
  if (pair.has('date') && pair.has('datetime')) return 'datetime';
  return 'text';
}

/** The key-candidate rank of a column name: 0 `id`, 1 id-like, 2 any other. */
export function keyRank(name: string): number {
  const n = name.trim();
  if (/^id$/i.test(n)) return 0;
  if (/(^|[^a-z0-9])(id|uuid|guid|key|code)$/i.test(n) || /[a-z0-9](Id|ID|Uuid|UUID|Key|Code)$/.test(n))
    return 1;
  return 2;
}

/**
 * SQL: the value of a cell as compared (a VARCHAR; NULL for every null form). The comparison type holds
 * every non-null value of the column in both versions (that is how inferred types are chosen), so the
 * plain casts of `knownTypedSql` are enough (no class test per cell).
 */
function normSql(ident: string, type: InferredType): string {
  const typed = knownTypedSql(ident, type);
  const value = type === 'decimal' ? `((${typed}) + 0.0)::VARCHAR` : `(${typed})::VARCHAR`;
  // a value that does not parse under the type (cannot happen with types inferred from these versions)
  // is compared as its text, marked so it never equals a typed value
  return `CASE WHEN ${isNullSql(ident)} THEN NULL ELSE coalesce(${value}, chr(2) || ${ident}) END`;
}

/** SQL: a VARCHAR list of the given expressions. */
function listSql(items: string[]): string {
  return `[${items.join(', ')}]::VARCHAR[]`;
}

/**
 * SQL: ONE VARCHAR for a VARCHAR list (never empty) that two lists share exactly when they hold the same
 * values in the same order, NULL equal to NULL: each value as its length in bytes, ':' and the value, a NULL
 * as '~' (no value starts with it), all run together — so the list is read back from the text alone, and two
 * texts are equal only for equal lists. Used as the key of several columns: grouped, numbered and joined as
 * a plain VARCHAR, like a key of one column (see compareSheet)
 */
function encodedSql(list: string): string {
  return `array_to_string(list_transform(${list}, y -> coalesce(strlen(y)::VARCHAR || ':' || y, '~')), '')`;
}

interface Shared {
  name: string;
  base: LoadedColumn;
  target: LoadedColumn;
  type: InferredType;
}

function pairSheets(base: LoadedVersion, target: LoadedVersion) {
  const pairs: Array<{ b: number; t: number }> = [];
  const sheetsAdded: string[] = [];
  const sheetsRemoved: string[] = [];
  if (base.sheets.length === 1 && target.sheets.length === 1) {
    pairs.push({ b: 0, t: 0 });
  } else {
    const byName = new Map(base.sheets.map((s, i) => [s.name, i]));
    const seen = new Set<number>();
    target.sheets.forEach((s, t) => {
      const b = byName.get(s.name);
      if (b === undefined) sheetsAdded.push(s.name);
      else {
        pairs.push({ b, t });
        seen.add(b);
      }
    });
    base.sheets.forEach((s, b) => {
      if (!seen.has(b)) sheetsRemoved.push(s.name);
    });
  }
  return { pairs, sheetsAdded, sheetsRemoved };
}

/** Checks that every key column is in both versions of every sheet compared (before any work). */
export function checkKeyColumns(base: LoadedVersion, target: LoadedVersion, keyColumns: string[]): void {
  const { pairs } = pairSheets(base, target);
  for (const { b, t } of pairs) {
    for (const k of keyColumns) {
      if (!base.sheets[b].columns.some((c) => c.name === k))
        throw new MissingKeyColumn(k, 'base', base.sheets[b].name);
      if (!target.sheets[t].columns.some((c) => c.name === k))
        throw new MissingKeyColumn(k, 'target', target.sheets[t].name);
    }
  }
}

let tableSeq = 0;

/** The key candidates whose raw texts one scan counts (see compareSheet). */
const KEY_SCAN_COLUMNS = 16;

/**
 * Above this many key columns (whole-row matching of a wide sheet), the key's values are typed by one
 * lambda per comparison type rather than one expression per column. Measured (2 threads, both versions at
 * once): planning the per-column expressions took ~0.6 s a version for 256 columns and 4–10 s for 1,024,
 * whatever the rows; the lambda costs ~0.7 µs more a cell (100k rows × 12 columns: 1.2 → 1.9–2.8 s), so it
 * pays for a wide sheet of a few thousand rows (1,024 columns × 3,000 rows: 4.1 s a version against 5.3–6.4 s)
 */
const WIDE_KEY = 256;

async function compareSheet(
  conn: DuckDBConnection,
  bs: LoadedSheet,
  ts: LoadedSheet,
  bTypes: InferredType[],
  tTypes: InferredType[],
  opts: CompareOptions,
): Promise<SheetComparison> {
  const bNames = new Map(bs.columns.map((c) => [c.name, c]));
  const tNames = new Set(ts.columns.map((c) => c.name));
  const shared: Shared[] = [];
  const typeChanges: TypeChange[] = [];
  for (const tc of ts.columns) {
    const bc = bNames.get(tc.name);
    if (!bc) continue;
    const from = bTypes[bc.position - 1];
    const to = tTypes[tc.position - 1];
    if (from !== to) typeChanges.push({ column: tc.name, from, to });
    shared.push({ name: tc.name, base: bc, target: tc, type: comparisonType(from, to) });
  }
  const columnsAdded = ts.columns.filter((c) => !bNames.has(c.name)).map((c) => c.name);
  const columnsRemoved = bs.columns.filter((c) => !tNames.has(c.name)).map((c) => c.name);

  const both = <T>(b: (c: DuckDBConnection) => Promise<T>, t: (c: DuckDBConnection) => Promise<T>) =>
    perVersion(conn, opts.other, b, t);
  // A sheet loaded `unchecked` (no checking pass: its types came from its report) is checked by its first
  // pass here — DuckDB's strict reader fails on a malformed line whatever the columns read — and counted
  // by it; a failure goes back to the caller, which loads that version the checked way
  const checked =
    <T>(sheet: LoadedSheet, side: 'base' | 'target', pass: (c: DuckDBConnection) => Promise<T>) =>
    async (c: DuckDBConnection): Promise<T> => {
      if (!sheet.unchecked) return pass(c);
      try {
        return await pass(c);
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        throw new UncheckedReadFailed([side]);
      }
    };
  const counted = (sheet: LoadedSheet, rows: number) => {
    if (!sheet.unchecked) return;
    if (opts.maxRows !== undefined && rows > opts.maxRows) throw tooManyRows(rows, { maxRows: opts.maxRows });
    sheet.rowCount = rows;
    sheet.unchecked = false;
  };
  const seq = ++tableSeq;
  const nb = `cmp_${seq}_b`;
  const nt = `cmp_${seq}_t`;
  const pairs = `cmp_${seq}_p`;
  const identOf = (s: Shared, side: 'base' | 'target') => (side === 'base' ? s.base.ident : s.target.ident);
  /** what a pass that needs no row number reads (LoadedSheet.rawTable) */
  const unnumbered = (sheet: LoadedSheet) => sheet.rawTable ?? sheet.table;
  try {
    // the key
    let matching: Matching = 'multiset';
    let keyIdx: number[] = [];
    /** blank rows of each version (counted when a key is inferred) */
    let blankRows = { base: 0, target: 0 };
    if (opts.keyColumns && opts.keyColumns.length > 0) {
      matching = 'key';
      keyIdx = opts.keyColumns.map((k) => {
        const j = shared.findIndex((s) => s.name === k);
        if (j < 0) {
          throw new MissingKeyColumn(k, bs.columns.some((c) => c.name === k) ? 'target' : 'base', ts.name);
        }
        return j;
      });
    } else if (shared.length > 0 && bs.rowCount !== 0 && ts.rowCount !== 0) {
      // a column unique under its comparison type is unique as raw text too (the typed value can only
      // merge texts): a cheap scan of the raw texts first (counting the rows, and the blank rows, too), then
      // the typed check of the candidates in order. Blank rows (every cell empty: kept as rows so that row
      // numbers do not shift) do not count against a key: they have none, and pair with each other. The
      // candidates' order comes from their names: their raw texts are counted KEY_SCAN_COLUMNS at a time, in
      // that order, until one is the key (each count(DISTINCT) holds a hash table of its own, ~2 MB before
      // any row: measured, 128 columns at once on both connections exceeded a 512 MB memory_limit)
      const ordered = shared
        .map((s, j) => ({ j, rank: keyRank(s.name), position: s.target.position }))
        .sort((x, y) => x.rank - y.rank || x.position - y.position)
        .map(({ j }) => j);
      for (const batch of batches(ordered, KEY_SCAN_COLUMNS)) {
        if (matching !== 'multiset') break;
        const rawStats = (sheet: LoadedSheet, side: 'base' | 'target') =>
          batch.map((j) => `, count(DISTINCT ${identOf(shared[j], side)}) AS d${j}`).join('') +
          `, count(*) FILTER (WHERE ${sheet.columns.map((c) => `${c.ident} IS NULL`).join(' AND ') || 'false'}) AS blank`;
        const [[b], [t]] = await both(
          checked(bs, 'base', (c) =>
            rows(c, `SELECT count(*) AS n${rawStats(bs, 'base')} FROM ${unnumbered(bs)}`),
          ),
          checked(ts, 'target', (c) =>
            rows(c, `SELECT count(*) AS n${rawStats(ts, 'target')} FROM ${unnumbered(ts)}`),
          ),
        );
        counted(bs, num(b.n));
        counted(ts, num(t.n));
        blankRows = { base: num(b.blank), target: num(t.blank) };
        const keyedRows = { base: bs.rowCount - blankRows.base, target: ts.rowCount - blankRows.target };
        // no key is inferred when either version has no row but blank ones (now counted)
        if (keyedRows.base === 0 || keyedRows.target === 0) break;
        const candidates = batch.filter(
          (j) => num(b[`d${j}`]) === keyedRows.base && num(t[`d${j}`]) === keyedRows.target,
        );
        for (const j of candidates) {
          const check = (c: DuckDBConnection, side: 'base' | 'target', table: string) =>
            rows(
              c,
              `SELECT count(v) AS n, count(DISTINCT v) AS d FROM (SELECT ${normSql(identOf(shared[j], side), shared[j].type)} AS v FROM ${table})`,
            );
          const [[cb], [ct]] = await both(
            (c) => check(c, 'base', unnumbered(bs)),
            (c) => check(c, 'target', unnumbered(ts)),
          );
          if (
            num(cb.n) === keyedRows.base &&
            num(cb.d) === keyedRows.base &&
            num(ct.n) === keyedRows.target &&
            num(ct.d) === keyedRows.target
          ) {
            matching = 'inferred_key';
            keyIdx = [j];
            break;
          }
        }
      }
    }
    // the rows as compared: the row number, the key (every shared column for multisets) typed as ONE value
    // `k`, and one 64-bit hash of the other shared columns' raw texts — the pairing never carries the
    // values; only pairs whose hashes differ are compared column by column (below). Equal hashes are taken
    // as equal raw texts (a collision between two different rows is ~2⁻⁶⁴ per pair). A key of one column is
    // its typed value; of several, the list of their typed values, in the same order on both sides,
    // written as ONE text (encodedSql: equal texts for equal values, nulls equal to nulls), so that the
    // numbering of repeated keys and the join below take one VARCHAR per row whatever the width: one term
    // per column (a 1,024-column sheet matched as whole rows) ran DuckDB out of its 512 MB memory_limit on 30
    // rows. The key is not the LIST itself: the first version of this change partitioned and joined on a
    // LIST value, and the full suite's process once crashed (a segmentation fault, cause not found, never
    // reproduced in 3 full suites and ~23 stress rounds of the random pairs since); the text keeps DuckDB's
    // windows, joins and grouping on VARCHAR keys, as for a key of one column
    const keyCols = matching === 'multiset' ? shared.map((_, j) => j) : keyIdx;
    const keyedCols = new Set(keyCols);
    const hashed = shared.map((_, j) => j).filter((j) => !keyedCols.has(j));
    const keySql = (side: 'base' | 'target') => {
      if (keyCols.length === 1) return normSql(identOf(shared[keyCols[0]], side), shared[keyCols[0]].type);
      if (keyCols.length <= WIDE_KEY)
        return encodedSql(listSql(keyCols.map((j) => normSql(identOf(shared[j], side), shared[j].type))));
      // a wider key: its columns grouped by comparison type (the same groups, in the same order, on both
      // sides), each group typed by ONE lambda over the list of its raw texts — the value SQL written once
      // per type, not once per column
      const groups = INFERRED_TYPES.map((type) => ({
        type,
        cols: keyCols.filter((j) => shared[j].type === type),
      })).filter((g) => g.cols.length > 0);
      return encodedSql(
        `list_concat(${groups
          .map(
            (g) =>
              `list_transform(${listSql(g.cols.map((j) => identOf(shared[j], side)))}, x -> ${normSql('x', g.type)})`,
          )
          .join(', ')})`,
      );
    };
    // from a lazy view's unnumbered twin, the rows come in file order and each one's number is set from
    // its position afterwards (rowid): numbering them as they are read would hold the scan to one thread
    const select = (sheet: LoadedSheet, side: 'base' | 'target') =>
      [
        sheet.rawTable ? 'NULL::BIGINT AS rn' : `${sheet.rowNumberColumn} AS rn`,
        ...(keyCols.length > 0 ? [`${keySql(side)} AS k`] : []),
        ...(hashed.length > 0
          ? [`hash(${hashed.map((j) => identOf(shared[j], side)).join(', ')}) AS h`]
          : []),
      ].join(', ');
    const small = async (c: DuckDBConnection, sheet: LoadedSheet, side: 'base' | 'target', into: string) => {
      await c.run(`CREATE TABLE ${into} AS SELECT ${select(sheet, side)} FROM ${unnumbered(sheet)}`);
      if (sheet.rawTable) await c.run(`UPDATE ${into} SET rn = rowid + ${firstRowOf(sheet)}`);
    };
    await both(
      checked(bs, 'base', (c) => small(c, bs, 'base', nb)),
      checked(ts, 'target', (c) => small(c, ts, 'target', nt)),
    );
    const keyed = matching !== 'multiset';
    const valueCols = keyed ? shared.map((_, j) => j).filter((j) => !keyIdx.includes(j)) : [];
    // A single non-null key unique in both versions (so for an inferred key, unless blank rows have none)
    // pairs by plain equality. Otherwise each row gets its occurrence number among the rows with the same key
    // (the whole row for multisets), by row number, and rows pair by (key, occurrence); nulls are equal to
    // nulls (blank rows pair with blank rows).
    let unique = matching === 'inferred_key' && blankRows.base === 0 && blankRows.target === 0;
    // one query per version, both at once: its rows counted (a version loaded unchecked) and a single given
    // key's values counted
    const keyStats =
      matching === 'key' && keyCols.length === 1 ? `, count(k) AS kn, count(DISTINCT k) AS kd` : '';
    if (keyStats || bs.unchecked || ts.unchecked) {
      const [[cb], [ct]] = await both(
        (c) => rows(c, `SELECT count(*) AS n${keyStats} FROM ${nb}`),
        (c) => rows(c, `SELECT count(*) AS n${keyStats} FROM ${nt}`),
      );
      counted(bs, num(cb.n));
      counted(ts, num(ct.n));
      if (keyStats) {
        unique =
          num(cb.kn) === bs.rowCount &&
          num(cb.kd) === bs.rowCount &&
          num(ct.kn) === ts.rowCount &&
          num(ct.kd) === ts.rowCount;
      }
    }
    let on: string;
    if (unique) {
      on = 'b.k = t.k';
    } else {
      const partition = keyCols.length === 0 ? '' : 'PARTITION BY k';
      const occ = (c: DuckDBConnection, table: string) =>
        c.run(
          `CREATE OR REPLACE TABLE ${table} AS SELECT *, row_number() OVER (${partition} ORDER BY rn) AS occ FROM ${table}`,
        );
      await both(
        (c) => occ(c, nb),
        (c) => occ(c, nt),
      );
      // null-safe equality written as plain equalities, so that DuckDB runs a hash join (the text of a key
      // of several columns is never NULL)
      on = [
        ...(keyCols.length === 1
          ? [`coalesce(b.k, '') = coalesce(t.k, '') AND (b.k IS NULL) = (t.k IS NULL)`]
          : keyCols.length > 1
            ? ['b.k = t.k']
            : []),
        'b.occ = t.occ',
      ].join(' AND ');
    }
    // the differing value columns, only for pairs whose hashes differ: their raw texts read back by row
    // number (as one list per row, `v`, in shared-column order), a column typed only where its raw text
    // differs
    const col = (alias: 'b' | 't', j: number) => `${alias}.v[${j + 1}]`;
    // The cells whose raw texts differ, one row each (column index, old, new), judged under their column's
    // type by one expression per type present: the value SQL (regular expressions among it) is written
    // once per type, not once per column and side (measured: ~64 MB of DuckDB memory for 11 columns)
    const rawDiffers =
      valueCols.length === 0
        ? `[]::STRUCT(j INTEGER, o VARCHAR, n VARCHAR)[]`
        : `list_filter([${valueCols
            .map(
              (j) =>
                `CASE WHEN ${col('b', j)} IS DISTINCT FROM ${col('t', j)} THEN {'j': ${j}, 'o': ${col('b', j)}, 'n': ${col('t', j)}} END`,
            )
            .join(', ')}], x -> x IS NOT NULL)`;
    const typesPresent = [...new Set(valueCols.map((j) => shared[j].type))];
    const typeOf = (ref: string) =>
      valueCols.length === 0
        ? 'NULL::VARCHAR'
        : `CASE ${valueCols.map((j) => `WHEN ${ref} = ${j} THEN '${shared[j].type}'`).join(' ')} END`;
    const valueDiffers =
      typesPresent.length === 0
        ? 'false'
        : `CASE ${typesPresent
            .map(
              (type) =>
                `WHEN ty = '${type}' THEN ${normSql('c.o', type)} IS DISTINCT FROM ${normSql('c.n', type)}`,
            )
            .join(' ')} END`;
    if (opts.signal?.aborted) throw opts.signal.reason;
    const joined = `cmp_${seq}_j`;
    const suspect = valueCols.length === 0 ? 'false' : 'b.h IS DISTINCT FROM t.h';
    // the pairs kept: the unpaired rows and the suspect pairs (the others, most rows, are only counted)
    await conn.run(`CREATE TABLE ${joined} AS
      SELECT b.rn AS b_rn, t.rn AS t_rn,
        CASE WHEN b.rn IS NULL THEN 'added' WHEN t.rn IS NULL THEN 'removed' ELSE 'matched' END AS side,
        b.rn IS NOT NULL AND t.rn IS NOT NULL AND ${suspect} AS suspect
      FROM ${nb} b FULL OUTER JOIN ${nt} t ON ${on}
      WHERE b.rn IS NULL OR t.rn IS NULL OR ${suspect}`);
    // the raw rows read back: only the suspect pairs' and the unpaired ones (for their key), picked by row
    // number in one scan of each version (a semi join whose small side is the row numbers: a lazy
    // version's rows are never all held). Each row's shared cells are kept as ONE list: the joins below
    // then carry one column, not one per cell (measured: a hash join whose build side has 13 VARCHAR
    // columns reserved ~70 MB for 3k rows, the same rows as a list ~0.3 MB)
    const rb = `cmp_${seq}_rb`;
    const rt = `cmp_${seq}_rt`;
    // A lazy view whose copy has one record per line (`LoadedSheet.lines`) is read back by line number from
    // the copy (./lines.ts), not parsed again by DuckDB through the numbered view
    const readBack = async (
      c: DuckDBConnection,
      sheet: LoadedSheet,
      side: 'base' | 'target',
      into: string,
      rn: 'b_rn' | 't_rn',
    ) => {
      const { lines } = sheet;
      if (lines) {
        const numbers = (
          await rows(c, `SELECT DISTINCT ${rn} AS n FROM ${joined} WHERE ${rn} IS NOT NULL ORDER BY n`)
        ).map((r) => num(r.n));
        const staged = linesTable(into);
        if (await stageLines(c, lines.path, numbers, staged, firstRowOf(sheet), opts.signal)) {
          // cells as the load reads them: an empty one NULL, numbers and dates in the file's notation rewritten
          const cells = shared.map((s) => {
            const cell = `nullif(s[${(side === 'base' ? s.base : s.target).position}], '')`;
            return lines.notation ? notationCellSql(cell, lines.notation) : cell;
          });
          await c.run(`CREATE TABLE ${into} AS
            SELECT rn, ${listSql(cells)} AS v
            FROM (SELECT rn, string_split(line, ${literal(lines.delimiter)}) AS s FROM ${staged})`);
          await c.run(`DROP TABLE ${staged}`);
          return;
        }
      }
      await c.run(`CREATE TABLE ${into} AS
        SELECT ${sheet.rowNumberColumn} AS rn, ${listSql(shared.map((s) => identOf(s, side)))} AS v
        FROM ${sheet.table}
        WHERE ${sheet.rowNumberColumn} IN (SELECT ${rn} FROM ${joined} WHERE ${rn} IS NOT NULL)`);
    };
    await both(
      (c) => readBack(c, bs, 'base', rb, 'b_rn'),
      (c) => readBack(c, ts, 'target', rt, 't_rn'),
    );
    // the pairs whose hashes are equal are unchanged: counted (every base row is in one pair or removed),
    // never copied
    const [kept] = await rows(conn, `SELECT count(b_rn) AS n FROM ${joined}`);
    const same = bs.rowCount - num(kept.n);
    const cells = `cmp_${seq}_c`;
    await conn.run(`CREATE TABLE ${cells} AS
      SELECT j.b_rn, j.t_rn, unnest(${rawDiffers}) AS c
      FROM (SELECT * FROM ${joined} WHERE suspect) j
      JOIN ${rb} b ON b.rn = j.b_rn
      JOIN ${rt} t ON t.rn = j.t_rn`);
    await conn.run(`CREATE TABLE ${pairs} AS
      SELECT b_rn, t_rn, side, NULL::INTEGER[] AS diff
      FROM ${joined} WHERE side <> 'matched'
      UNION ALL
      SELECT j.b_rn, j.t_rn, j.side, coalesce(d.diff, []::INTEGER[]) AS diff
      FROM (SELECT * FROM ${joined} WHERE suspect) j
      LEFT JOIN (
        SELECT b_rn, t_rn, list(c.j ORDER BY c.j) AS diff
        FROM (SELECT b_rn, t_rn, c, ${typeOf('c.j')} AS ty FROM ${cells})
        WHERE ${valueDiffers}
        GROUP BY b_rn, t_rn
      ) d ON d.b_rn = j.b_rn AND d.t_rn = j.t_rn`);
    await conn.run(`DROP TABLE ${joined}`);
    const [counts] = await rows(
      conn,
      `SELECT count(*) FILTER (WHERE side = 'added') AS added,
              count(*) FILTER (WHERE side = 'removed') AS removed,
              count(*) FILTER (WHERE side = 'matched' AND len(diff) > 0) AS changed,
              count(*) FILTER (WHERE side = 'matched' AND len(diff) = 0) + ${same} AS unchanged
       FROM ${pairs}`,
    );
    let duplicateKeys = 0;
    // an inferred key's values are unique (blank rows, paired by occurrence above, have none)
    if (keyed && !unique && matching === 'key') {
      const [d] = await rows(
        conn,
        `SELECT count(*) AS n FROM (SELECT k FROM ${nb} WHERE occ = 2 UNION SELECT k FROM ${nt} WHERE occ = 2)`,
      );
      duplicateKeys = num(d.n);
    }

    // the row changes, in row order, a chunk at a time, each as the JSON text of a RowChange written by
    // DuckDB: the change list goes to its table as JSON, so no change is built as a JavaScript object
    // (measured: converting 2k rows' lists to objects cost more than the query)
    if (opts.onChanges) {
      const key = (alias: 'b' | 't') =>
        `json_object(${keyIdx.map((j) => `${literal(shared[j].name)}, ${col(alias, j)}`).join(', ')})`;
      const names = listSql(shared.map((s) => literal(s.name)));
      const sql = `SELECT to_json({
          'sheet': ${literal(ts.name)},
          'kind': CASE p.side WHEN 'matched' THEN 'changed' ELSE p.side END,
          'key': ${keyed ? `CASE WHEN p.t_rn IS NULL THEN ${key('b')} ELSE ${key('t')} END` : 'NULL::JSON'},
          'baseRow': p.b_rn,
          'targetRow': p.t_rn,
          'columns': CASE WHEN p.side = 'matched' THEN
            list_transform(p.diff, j -> {'column': (${names})[j + 1], 'old': b.v[j + 1], 'new': t.v[j + 1]}) END
        })::VARCHAR AS change
        FROM ${pairs} p
        LEFT JOIN ${rb} b ON b.rn = p.b_rn
        LEFT JOIN ${rt} t ON t.rn = p.t_rn
        WHERE p.side <> 'matched' OR len(p.diff) > 0
        ORDER BY coalesce(p.t_rn, p.b_rn), p.b_rn NULLS LAST, p.t_rn NULLS LAST`;
      const result = await conn.stream(sql);
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        if (opts.signal?.aborted) throw opts.signal.reason;
        await opts.onChanges(chunk.getColumnVector(0).toArray() as string[]);
      }
    }
    return {
      name: ts.name,
      baseName: bs.name,
      matching,
      keyColumns: keyIdx.map((j) => shared[j].name),
      baseRows: bs.rowCount,
      targetRows: ts.rowCount,
      added: num(counts.added),
      removed: num(counts.removed),
      changed: num(counts.changed),
      unchanged: num(counts.unchanged),
      duplicateKeys,
      columnsAdded,
      columnsRemoved,
      typeChanges,
    };
  } finally {
    const readBackTables = [`cmp_${seq}_rb`, `cmp_${seq}_rt`].flatMap((t) => [t, linesTable(t)]);
    for (const t of [`cmp_${seq}_j`, `cmp_${seq}_c`, ...readBackTables, pairs, nt, nb])
      await conn.run(`DROP TABLE IF EXISTS ${t}`).catch(() => undefined);
  }
}

/**
 * Compares two loaded versions (see the rules at the top of this file). `baseTypes` / `targetTypes`: the
 * inferred types of the saved reports, or `inferTypes` of the loaded versions.
 */
export async function compareVersions(
  conn: DuckDBConnection,
  base: LoadedVersion,
  target: LoadedVersion,
  baseTypes: SheetTypes,
  targetTypes: SheetTypes,
  opts: CompareOptions = {},
): Promise<ComparisonSummary> {
  const { pairs, sheetsAdded, sheetsRemoved } = pairSheets(base, target);
  if (opts.keyColumns && opts.keyColumns.length > 0) checkKeyColumns(base, target, opts.keyColumns);
  const multi = base.sheets.length > 1 || target.sheets.length > 1;
  const qualify = (sheet: string, column: string) => (multi ? `${sheet}!${column}` : column);
  const summary: ComparisonSummary = {
    sheetsAdded,
    sheetsRemoved,
    added: 0,
    removed: 0,
    changed: 0,
    unchanged: 0,
    columnsAdded: [],
    columnsRemoved: [],
    typeChanges: [],
    sheets: [],
  };
  // the value comparisons are long expressions whose macros hold small IN lists: DuckDB's rewriting of
  // those into joins cost ~0.2 s of planning per query (measured), more than the rows they run on
  for (const c of opts.other ? [conn, opts.other] : [conn])
    await c.run(`SET disabled_optimizers = 'in_clause,build_side_probe_side'`);
  let done = 0;
  for (const { b, t } of pairs) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    opts.onProgress?.({ sheetsDone: done, sheetsTotal: pairs.length, phase: 'comparing' });
    const sheet = await compareSheet(
      conn,
      base.sheets[b],
      target.sheets[t],
      baseTypes[b],
      targetTypes[t],
      opts,
    );
    summary.sheets.push(sheet);
    summary.added += sheet.added;
    summary.removed += sheet.removed;
    summary.changed += sheet.changed;
    summary.unchanged += sheet.unchanged;
    summary.columnsAdded.push(...sheet.columnsAdded.map((c) => qualify(sheet.name, c)));
    summary.columnsRemoved.push(...sheet.columnsRemoved.map((c) => qualify(sheet.name, c)));
    summary.typeChanges.push(
      ...sheet.typeChanges.map((c) => ({ ...c, column: qualify(sheet.name, c.column) })),
    );
    done++;
  }
  for (const s of base.sheets.filter((x) => sheetsRemoved.includes(x.name))) {
    summary.columnsRemoved.push(...s.columns.map((c) => qualify(s.name, c.name)));
  }
  for (const s of target.sheets.filter((x) => sheetsAdded.includes(x.name))) {
    summary.columnsAdded.push(...s.columns.map((c) => qualify(s.name, c.name)));
  }
  opts.onProgress?.({ sheetsDone: done, sheetsTotal: pairs.length, phase: 'compared' });
  return summary;
}
