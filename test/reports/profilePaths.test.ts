/**
 * The profile's shortcuts give the same answers as the long way round: the class test
 * (`ds_class`, a number's cast before its pattern) against every pattern tried in turn, and duplicate
 * rows with a key column (no grouping of whole rows) against the grouping.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  fileSource,
  loadVersion,
  openEngine,
  profileVersion,
  type Engine,
} from '../../domain/reports/engine';
import { literal } from '../../domain/reports/engine/sql';

const workDir = path.join(os.tmpdir(), `profile-paths-${process.pid}`);
let engine: Engine | undefined;

afterEach(() => {
  engine?.close();
  engine = undefined;
});
after(async () => rm(workDir, { recursive: true, force: true }));

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

function candidates(): string[] {
  const fixed = [
    ...['0', '5', '-5', '+5', '007', '-0', '00', '9223372036854775807', '9223372036854775808'],
    ...['-9223372036854775808', '-9223372036854775809', '123456789012345678901', '1_000', '0x10', '0b1'],
    ...['5.0', '0.5', '.5', '5.', '-487.35', '-0.0', '0.0', '1e5', '1E5', '1e+20', '1e-07', '1e-7', '5e-324'],
    ...['1.7976931348623157e+308', '1e309', '1.5e', 'nan', 'NaN', 'inf', '-inf', 'infinity', '1,5', '1.2.3'],
    ...['100000.0', '1.2345678901234568e+20', '9007199254740993', '0.1', ' 5', '5 ', ' -5.5 ', '- 5', '--5'],
    ...['2020-01-01', '2020-1-1', '2020-02-30', '2020-02-29', '2021-02-29', '0001-01-01', '9999-12-31'],
    ...['10000-01-01', '2020-01-01 ', ' 2020-01-01', '2020-01-01T10:00:00', '2020-01-01 10:00:00'],
    ...['2020-01-01 10:00', '2020-01-01T10:00', '2020-01-01 10:00:00.5', '2020-01-01 10:00:00.500'],
    ...['2020-01-01T10:00Z', '2020-01-01 10:00+02:00', '2020-01-01T10:00-0530', '2020-01-01 10:00 '],
    ...['2020-01-01 10:00:00.123456', '2020-01-01 10:00:00.1234567', '2020-01-01 10:00:00+02'],
    ...['2020-01-01 10:00:00+0200', '2020-01-01T10:00:00Z', '2020-01-01 25:00:00', '2020-01-01 10:61:00'],
    ...['2020-01-01 24:00:00', '2020-01-01T24:00', '2020-01-01 23:59:60', '2020-01-01 23:59:59.999'],
    ...[
      '2020-01-01 10:00+18:00',
      '2020-01-01 10:00-1800',
      '2020-01-01 10:00+18:01',
      '2020-01-01 10:00+25:00',
    ],
    ...['2020-01-01 10:00:00+02:60', '2020-01-01 10:00:00-17:59', '2020-01-01 10:00:00+19:00 '],
    ...['0001-01-01 00:00:00', '0001-01-01 00:00:00 (BC)', '2020-01-01 10:00:00 (BC)', '2020-01-01X10:00:00'],
    ...['2020-01-01t10:00:00', '2020-13-01', '2020-00-10', '1234-5', '-2020-01-01', '2020-01-01T'],
    ...['true', 'FALSE', ' yes', 'No ', 'null', ' N/A', '#n/a', 'na', '', ' ', 'text', 'C123456', 'c-42'],
    ...['NaN ', '  NULL', 'N', 'nul', '#N/A ', '#', 'nope', 'Na'],
  ];
  const r = random(12_345);
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  const generated: string[] = [];
  for (let i = 0; i < 4000; i++) {
    const kind = i % 8;
    const n = Math.floor(r() * 2e6) - 1e6;
    if (kind === 0) generated.push(String(n));
    else if (kind === 1) generated.push(String(n / 100));
    else if (kind === 2) generated.push((r() * 10 ** Math.floor(r() * 40 - 20)).toString());
    else if (kind === 3) generated.push((n / 7).toFixed(Math.floor(r() * 8)));
    else {
      const y = 1900 + Math.floor(r() * 200);
      const day = `${pad(y, 4)}-${pad(1 + Math.floor(r() * 13), 2)}-${pad(1 + Math.floor(r() * 31), 2)}`;
      const time = `${pad(Math.floor(r() * 25), 2)}:${pad(Math.floor(r() * 60), 2)}:${pad(Math.floor(r() * 60), 2)}`;
      const frac =
        r() < 0.3 ? `.${pad(Math.floor(r() * 1000), 3)}` : r() < 0.2 ? `.${Math.floor(r() * 9) + 1}` : '';
      if (kind === 4) generated.push(day);
      else if (kind === 5) generated.push(`${day}T${time}${frac}`);
      else if (kind === 6) generated.push(`${day} ${time}${frac}`);
      else generated.push(`${day} ${time}${r() < 0.5 ? 'Z' : '+01:00'}`);
    }
  }
  return [...fixed, ...generated];
}

/**
 * The class rules as first written (issue 12: every pattern tried in turn), the reference the engine's
 * shortcuts (one cast first, casts before patterns) must agree with.
 */
const REFERENCE_MACROS = [
  `CREATE OR REPLACE TEMP MACRO ref_number(v) AS (
    CASE
      WHEN regexp_full_match(v, '[+-]?[0-9]+ *') AND TRY_CAST(v AS BIGINT) IS NOT NULL THEN 1
      WHEN regexp_full_match(v, '[+-]?([0-9]+\\.[0-9]*|\\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)? *')
        AND isfinite(TRY_CAST(v AS DOUBLE)) THEN 2
      WHEN regexp_full_match(v, '[0-9]{4}-[0-9]{2}-[0-9]{2} *') AND TRY_CAST(v AS DATE) IS NOT NULL THEN 4
      WHEN regexp_full_match(v, '[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})? *')
        AND TRY_CAST(regexp_replace(trim(v), '^(.{16})($|[^:])', '\\1:00\\2') AS TIMESTAMPTZ) IS NOT NULL
        -- hours up to 23 (the cast takes 24:00:00), an offset within ±18:00 of at most 59 minutes
        AND substr(v, 12, 2)::INT <= 23
        AND (NOT regexp_matches(v, '[0-9][+-][0-9]{2}:?[0-9]{2} *$')
          OR (regexp_extract(v, '[+-]([0-9]{2}):?([0-9]{2}) *$', 2)::INT <= 59
            AND regexp_extract(v, '[+-]([0-9]{2}):?([0-9]{2}) *$', 1)::INT * 60
              + regexp_extract(v, '[+-]([0-9]{2}):?([0-9]{2}) *$', 2)::INT <= 18 * 60)) THEN 5
      ELSE 6
    END)`,
  `CREATE OR REPLACE TEMP MACRO ref_class(v) AS (
    CASE
      WHEN v IS NULL THEN 0
      WHEN regexp_full_match(v, '(?i) *(null|n/a|na|#n/a|nan)? *') THEN 0
      WHEN regexp_full_match(v, '(?i) *(true|false|yes|no) *') THEN 3
      WHEN regexp_full_match(ltrim(v), '[0-9+.-].*') THEN ref_number(ltrim(v))
      ELSE 6
    END)`,
];

describe('reports: the profile shortcuts agree with the long way round', () => {
  it('classifies every value as the patterns tried in turn do', async () => {
    await mkdir(workDir, { recursive: true });
    engine = await openEngine({ threads: 1, memoryLimitMb: 128, tempDirectory: path.join(workDir, 'duck') });
    const values = candidates();
    await engine.conn.run('CREATE TABLE vals (v VARCHAR)');
    for (let i = 0; i < values.length; i += 500) {
      await engine.conn.run(
        `INSERT INTO vals VALUES ${values
          .slice(i, i + 500)
          .map((v) => `(${literal(v)})`)
          .join(', ')}`,
      );
    }
    for (const sql of REFERENCE_MACROS) await engine.conn.run(sql);
    const reader = await engine.conn.runAndReadAll(
      `SELECT v, ds_class(v) AS engine, ref_class(v) AS ref FROM vals WHERE ds_class(v) IS DISTINCT FROM ref_class(v)`,
    );
    expect(reader.getRowObjectsJson()).to.deep.equal([]);
    // the null test (its own first-character guard) says null exactly where the classes do
    const nulls = await engine.conn.runAndReadAll(
      `SELECT v FROM (SELECT v FROM vals UNION ALL SELECT NULL) WHERE ds_is_null(v) IS DISTINCT FROM (ref_class(v) = 0)`,
    );
    expect(nulls.getRowObjectsJson()).to.deep.equal([]);
  });

  it('profiles a wide sheet in batches of columns exactly as one query per column does', async () => {
    await mkdir(workDir, { recursive: true });
    engine = await openEngine({ threads: 2, memoryLimitMb: 128, tempDirectory: path.join(workDir, 'duck') });
    const r = random(4242);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
    // ten kinds of column, each four times (40 columns), 600 rows plus a blank one and two repeats
    const kinds: Array<(row: number) => string> = [
      (row) => String(row), // a key
      () => String(Math.floor(r() * 7) - 3), // integers of few values (summed when narrow)
      () => (r() < 0.1 ? '' : (r() * 1000 - 500).toFixed(2)), // decimals with empty cells
      () => `2024-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 10)}`, // dates
      () => pick(['2024-01-02 10:00:00', '2024-01-02T12:00+02:00', '2024-03-04T05:06:07Z', 'N/A']),
      () => pick(['true', 'FALSE', 'yes', 'no', ' null ']),
      () => pick(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l']), // ties among the top values
      () => pick(['1', '2.5', 'x', '2024-01-01', 'true', '']), // mixed classes
      () => `"${'long text, '.repeat(25)}${Math.floor(r() * 50)}"`, // clipped in the profile
      () => '', // no value
    ];
    const header = Array.from({ length: 40 }, (_, i) => `c${i}`).join(',');
    const lines = [header];
    for (let row = 0; row < 600; row++)
      lines.push(Array.from({ length: 40 }, (_, i) => kinds[i % 10](row)).join(','));
    lines.push(','.repeat(39), lines[3], lines[4]);
    const file = path.join(workDir, 'wide.csv');
    await writeFile(file, lines.join('\n') + '\n');
    const loaded = await loadVersion(
      engine.conn,
      fileSource(file, { format: 'csv', delimiter: null, sizeBytes: 1 }),
      { maxColumns: 100, xlsxLimits: null, maxRows: 100_000, workDir },
    );
    const other = await engine.connect();
    // numbers to 12 significant digits: sums of the same values in another order may differ in the last bits
    const rounded = (p: unknown) =>
      JSON.parse(JSON.stringify(p), (_k, v: unknown) =>
        typeof v === 'number' ? Number(v.toPrecision(12)) : v,
      );
    const perColumn = await profileVersion(engine.conn, loaded, other, 1000);
    const batched = await profileVersion(engine.conn, loaded, other, 0);
    expect(rounded(batched)).to.deep.equal(rounded(perColumn));
    // the sheet is what it was built to be, so the comparison is not of two empty profiles
    const sheet = perColumn.sheets[0];
    expect(sheet).to.include({ rows: 603, columns: 40, blankRows: 1, duplicateRows: 2 });
    expect(sheet.columnProfiles.slice(0, 10).map((c) => c.inferredType)).to.deep.equal([
      'integer',
      'integer',
      'decimal',
      'date',
      'datetime',
      'boolean',
      'text',
      'text',
      'text',
      'text',
    ]);
    expect(sheet.columnProfiles[6].topValues).to.have.length(10);
    expect(sheet.columnProfiles[1].quantiles).to.not.equal(null);
  });

  it('counts duplicate and blank rows as the grouping of whole rows does, with or without a key column', async () => {
    await mkdir(workDir, { recursive: true });
    engine = await openEngine({ threads: 2, memoryLimitMb: 128, tempDirectory: path.join(workDir, 'duck') });
    const cases: Array<{ lines: string[]; duplicateRows: number; blankRows: number }> = [
      // id is a key (every value its own): nothing repeats
      { lines: ['id,a', '1,x', '2,x', '3,y'], duplicateRows: 0, blankRows: 0 },
      // no key: the second "1,x" repeats the first; one blank row
      { lines: ['id,a', '1,x', '1,x', ',', '2,y'], duplicateRows: 1, blankRows: 1 },
      // distinct as many as rows but one is a null word: not a key (two "n/a,x" rows repeat)
      { lines: ['id,a', 'n/a,x', 'n/a,x', '2,y'], duplicateRows: 1, blankRows: 0 },
      // a column of distinct values but with an empty cell: not a key
      { lines: ['id,a', '1,x', ',x', ',x'], duplicateRows: 1, blankRows: 0 },
    ];
    for (const [i, c] of cases.entries()) {
      const file = path.join(workDir, `dup-${i}.csv`);
      await writeFile(file, c.lines.join('\n') + '\n');
      const loaded = await loadVersion(
        engine.conn,
        fileSource(file, { format: 'csv', delimiter: null, sizeBytes: 1 }),
        { maxColumns: 100, xlsxLimits: null, maxRows: 100_000, workDir, tablePrefix: `d${i}_` },
      );
      const sheet = (await profileVersion(engine.conn, loaded)).sheets[0];
      expect({ duplicateRows: sheet.duplicateRows, blankRows: sheet.blankRows }, `case ${i}`).to.deep.equal({
        duplicateRows: c.duplicateRows,
        blankRows: c.blankRows,
      });
    }
  });
});
