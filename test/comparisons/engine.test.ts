/**
 * The comparison engine against the reference (./reference.ts) on random pairs of small tables: shuffled
 * rows, reordered / added / removed / retyped columns, duplicates, nulls, keyed and keyless. Every count,
 * every schema change and every row change must agree exactly.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import ExcelJS from 'exceljs';
import {
  fileSource,
  loadVersion,
  openEngine,
  profileVersion,
  type Engine,
  type LoadedVersion,
} from '../../domain/reports/engine';
import type { FileFormat } from '../../domain/files/formats';
import {
  compareVersions,
  inferTypes,
  MissingKeyColumn,
  type RowChange,
  type SheetTypes,
} from '../../domain/comparisons/engine';
import { compareRef, type Table } from './reference';
import { csv } from './randomPairs';
import { canonical, expectAgreementOnRandomPairs } from './agreement';

const workDir = path.join(os.tmpdir(), `compare-test-${process.pid}`);

let engine: Engine;
let seq = 0;

async function load(
  t: Table | Buffer,
  format: FileFormat = 'csv',
  conn = engine.conn,
): Promise<LoadedVersion> {
  const n = ++seq; // read once: the lanes load side by side
  const file = path.join(workDir, `t${n}.${format}`);
  const bytes = Buffer.isBuffer(t) ? t : Buffer.from(csv(t));
  await writeFile(file, bytes);
  return loadVersion(conn, fileSource(file, { format, delimiter: null, sizeBytes: bytes.length }), {
    maxColumns: 1024,
    xlsxLimits: null,
    maxRows: 100_000,
    workDir,
    tablePrefix: `v${n}_`,
  });
}

async function compare(
  base: LoadedVersion,
  target: LoadedVersion,
  keyColumns?: string[],
  conn = engine.conn,
  types?: [SheetTypes, SheetTypes],
) {
  const changes: RowChange[] = [];
  const summary = await compareVersions(
    conn,
    base,
    target,
    types?.[0] ?? (await inferTypes(conn, base)),
    types?.[1] ?? (await inferTypes(conn, target)),
    { keyColumns, onChanges: (c) => void changes.push(...c.map((t) => JSON.parse(t) as RowChange)) },
  );
  return { summary, changes };
}

describe('comparison engine', function () {
  this.timeout(300_000);

  before(async () => {
    await mkdir(workDir, { recursive: true });
    engine = await openEngine({
      threads: 1,
      memoryLimitMb: 256,
      tempDirectory: path.join(workDir, 'duckdb'),
    });
  });
  after(async () => {
    engine?.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it('agrees with the reference on 240 random pairs of small tables (every count and every change)', async () => {
    // two pairs at once, each lane on its own connection
    const conns = [engine.conn, await engine.connect()];
    const matchings = await expectAgreementOnRandomPairs(
      async ({ base, target, keyColumns }, lane) => {
        const conn = conns[lane];
        const b = await load(base, 'csv', conn);
        const t = await load(target, 'csv', conn);
        const result = await compare(b, t, keyColumns, conn);
        for (const v of [b, t]) for (const sh of v.sheets) await conn.run(`DROP TABLE ${sh.table}`);
        return result;
      },
      240,
      2,
    );
    // the generator exercises every kind of matching
    console.log('      matchings:', JSON.stringify(matchings));
    expect(matchings.key).to.be.greaterThan(20);
    expect(matchings.inferred_key).to.be.greaterThan(20);
    expect(matchings.multiset).to.be.greaterThan(20);
  });

  it('judges 1 vs 1.0, trailing spaces and dates by inferred type', async () => {
    const b = await load({
      header: ['id', 'n', 'x', 't', 'd'],
      rows: [
        ['1', '1', '1', 'a', '2024-01-01'],
        ['2', '2.50', '2', 'b', '2024-01-02T00:00:00Z'],
      ],
    });
    const t = await load({
      header: ['d', 'id', 'n', 'x', 't'],
      rows: [
        ['2024-01-02T02:00:00+02:00', '2', '2.5', '2', 'b '],
        ['2024-01-01 00:00', '1', '1.0', 'one', 'a'],
      ],
    });
    const { summary, changes } = await compare(b, t);
    const s = summary.sheets[0];
    expect(s.matching).to.equal('inferred_key');
    expect(s.keyColumns).to.deep.equal(['id']);
    expect(s.typeChanges).to.deep.equal([{ column: 'x', from: 'integer', to: 'text' }]);
    expect(changes.map((c) => [c.key, c.columns])).to.deep.equal([
      [{ id: '2' }, [{ column: 't', old: 'b', new: 'b ' }]],
      [{ id: '1' }, [{ column: 'x', old: '1', new: 'one' }]],
    ]);
  });

  it('blank rows (separator lines) do not stop a key being inferred: they pair with each other', async () => {
    const b = await load({
      header: ['id', 'name', 'qty'],
      rows: [
        ['1', 'apple', '3'],
        ['', '', ''],
        ['2', 'pear', '5'],
        ['', '', ''],
        ['3', 'plum', '1'],
      ],
    });
    const t = await load({
      header: ['id', 'name', 'qty'],
      rows: [
        ['2', 'pear', '6'],
        ['', '', ''],
        ['1', 'apple', '3'],
        ['4', 'fig', '2'],
      ],
    });
    const { summary, changes } = await compare(b, t);
    const s = summary.sheets[0];
    expect(s.matching).to.equal('inferred_key');
    expect(s.keyColumns).to.deep.equal(['id']);
    expect(s.duplicateKeys).to.equal(0);
    // base 5 rows = removed 2 (plum, a blank row) + changed 1 (pear) + unchanged 2 (apple, a blank row)
    expect([s.added, s.removed, s.changed, s.unchanged]).to.deep.equal([1, 2, 1, 2]);
    expect(changes.map((c) => [c.kind, c.key, c.baseRow, c.targetRow])).to.deep.members([
      ['changed', { id: '2' }, 4, 2],
      ['added', { id: '4' }, null, 5],
      ['removed', { id: null }, 5, null],
      ['removed', { id: '3' }, 6, null],
    ]);
    expect(changes.find((c) => c.kind === 'changed')?.columns).to.deep.equal([
      { column: 'qty', old: '5', new: '6' },
    ]);
  });

  it('infers the key of a 300-column sheet: its last column, the only one unique (key candidates scanned in batches)', async () => {
    // 299 columns of repeated values, then `ref`, unique: every column is a key candidate. Counted all at once
    // (one hash table per count(DISTINCT)), 300 columns ran out of the 256 MB memory limit before any row
    const width = 300;
    const header = [...Array.from({ length: width - 1 }, (_, i) => `c${i + 1}`), 'ref'];
    const row = (i: number) => [...Array.from({ length: width - 1 }, (_, j) => String((i + j) % 3)), `r${i}`];
    const baseRows = Array.from({ length: 20 }, (_, i) => row(i));
    const targetRows = baseRows.map((r) => [...r]).reverse();
    targetRows[4][7] = 'x';
    targetRows.push(row(20));
    const b = await load({ header, rows: baseRows });
    const t = await load({ header, rows: targetRows });
    const { summary, changes } = await compare(b, t);
    const s = summary.sheets[0];
    expect(s.matching).to.equal('inferred_key');
    expect(s.keyColumns).to.deep.equal(['ref']);
    expect([s.added, s.removed, s.changed, s.unchanged]).to.deep.equal([1, 0, 1, 19]);
    expect(changes.map((c) => [c.kind, c.key, c.baseRow, c.targetRow, c.columns])).to.deep.equal([
      ['changed', { ref: 'r15' }, 17, 6, [{ column: 'c8', old: String((15 + 7) % 3), new: 'x' }]],
      ['added', { ref: 'r20' }, null, 22, null],
    ]);
  });

  it('types the columns of a 70-column version (several queries of columns) as its report does', async () => {
    // seven kinds of column ten times over, in three batches of the type query (32, 32, 6)
    const kinds: Array<(r: number) => string | null> = [
      (r) => String(r),
      (r) => (r % 3 === 0 ? null : `${r}.5`),
      (r) => ['true', 'no', 'YES'][r % 3],
      (r) => `2024-01-${String(1 + (r % 28)).padStart(2, '0')}`,
      (r) => (r % 2 ? '2024-01-02' : '2024-01-02T10:00+02:00'),
      (r) => (r % 5 === 0 ? 'n/a' : `x${r}`),
      (r) => (r % 4 === 0 ? 'seven' : String(r)),
    ];
    const header = Array.from({ length: 70 }, (_, i) => `c${i}`);
    const rows = Array.from({ length: 40 }, (_, r) => header.map((_, i) => kinds[i % 7](r)));
    const version = await load({ header, rows });
    const profile = await profileVersion(engine.conn, version);
    const types = await inferTypes(engine.conn, version);
    expect(types).to.deep.equal(profile.sheets.map((s) => s.columnProfiles.map((c) => c.inferredType)));
    expect(types[0].slice(0, 7)).to.deep.equal([
      'integer',
      'decimal',
      'boolean',
      'date',
      'datetime',
      'text',
      'text',
    ]);
  });

  it('compares two 1,024-column versions without a unique column (whole rows, and a 2-column key) as the reference does', async () => {
    // no column is unique, so whole-row matching over all 1,024 shared columns. Partitioned and joined on
    // one term per column, 1,024 columns ran out of memory (512 MB as served; 256 MB here) on 30 rows
    const width = 1024;
    const header = Array.from({ length: width }, (_, j) => `c${j + 1}`);
    // integer, decimal, text and date columns, some nulls; at most 4 distinct values a column
    const cell = (i: number, j: number): string => {
      // c1 and c2: each with repeats, together unique but for the repeated rows
      if (j < 2) return String(j === 0 ? i % 6 : Math.floor(i / 6));
      const v = (i * (1 + (j % 3)) + j) % 4;
      if ((i + j) % 17 === 0) return '';
      switch (j % 4) {
        case 0:
          return String(v);
        case 1:
          return `${v}.50`;
        case 2:
          return `t${v}`;
        default:
          return `2024-01-0${v + 1}`;
      }
    };
    const row = (i: number) => header.map((_, j) => cell(i, j));
    const baseRows = Array.from({ length: 30 }, (_, i) => row(i % 26)); // rows 27–30 repeat rows 1–4
    const targetRows = baseRows.slice(2).map((r) => [...r]); // rows 1–2 removed
    targetRows.reverse();
    targetRows[3][5] = '3.5'; // a change (decimal column)…
    targetRows[8][6] = 'T1'; // …and text, case counts
    targetRows[10][9] = targetRows[10][9] === '' ? 'NA' : targetRows[10][9].replace('.50', '.5'); // no change
    targetRows[12][3] = ''; // a date now null
    targetRows.push(row(40), row(41), [...baseRows[3]]); // added: two new rows and one more repeat
    const b = await load({ header, rows: baseRows });
    const t = await load({ header, rows: targetRows });
    // classified once (one query per column) for both comparisons
    const types: [SheetTypes, SheetTypes] = [
      await inferTypes(engine.conn, b),
      await inferTypes(engine.conn, t),
    ];
    for (const keyColumns of [undefined, ['c2', 'c1']]) {
      const expected = compareRef({ header, rows: baseRows }, { header, rows: targetRows }, keyColumns);
      const { summary, changes } = await compare(b, t, keyColumns, engine.conn, types);
      const s = summary.sheets[0];
      expect(s.matching).to.equal(keyColumns ? 'key' : 'multiset');
      // base rows 27–30 repeat the keys of rows 1–4
      expect(s.duplicateKeys).to.equal(keyColumns ? 4 : 0);
      expect([s.added, s.removed, s.changed, s.unchanged]).to.deep.equal([
        expected.added,
        expected.removed,
        expected.changed,
        expected.unchanged,
      ]);
      expect(canonical(changes)).to.deep.equal(canonical(expected.changes));
      expect(s.added + s.changed + s.unchanged).to.equal(targetRows.length);
      expect(s.removed + s.changed + s.unchanged).to.equal(baseRows.length);
      // the pair exercises what it claims: repeated rows (keys), changes, unchanged rows
      expect([expected.added, expected.removed, expected.changed, expected.unchanged]).to.deep.equal(
        keyColumns ? [3, 2, 3, 25] : [6, 5, 0, 25],
      );
    }
  });

  it('a key of several columns is one text that equals another only for equal values (whole rows)', async () => {
    // run together naively, ab|c and a|bc, or a null and the text ~, would be the same key; each row
    // repeats so that no column is unique (whole rows). Only z|z is in both versions
    const header = ['x', 'y'];
    const baseRows = [
      ['ab', 'c'],
      ['ab', 'c'],
      ['~', ''],
      ['~', ''],
      ['1:', 'a'],
      ['z', 'z'],
    ];
    const targetRows = [
      ['a', 'bc'],
      ['a', 'bc'],
      ['', '~'],
      ['', '~'],
      ['', '1:a'],
      ['z', 'z'],
    ];
    const expected = compareRef({ header, rows: baseRows }, { header, rows: targetRows });
    const { summary, changes } = await compare(
      await load({ header, rows: baseRows }),
      await load({ header, rows: targetRows }),
    );
    const s = summary.sheets[0];
    expect(s.matching).to.equal('multiset');
    expect([s.added, s.removed, s.changed, s.unchanged]).to.deep.equal([5, 5, 0, 1]);
    expect([expected.added, expected.removed, expected.changed, expected.unchanged]).to.deep.equal([
      5, 5, 0, 1,
    ]);
    expect(canonical(changes)).to.deep.equal(canonical(expected.changes));
  });

  it('fails with MissingKeyColumn when a named key column is missing in either version', async () => {
    const b = await load({ header: ['id', 'a'], rows: [['1', 'x']] });
    const t = await load({ header: ['key', 'a'], rows: [['1', 'x']] });
    let err: unknown;
    try {
      await compare(b, t, ['id']);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(MissingKeyColumn);
    expect((err as MissingKeyColumn).side).to.equal('target');
  });

  it('compares a 3-sheet workbook sheet by sheet by name, with sheets added and removed', async () => {
    const book = async (sheets: Array<[string, string[][]]>) => {
      const wb = new ExcelJS.Workbook();
      for (const [name, rows] of sheets) {
        const ws = wb.addWorksheet(name);
        for (const row of rows) ws.addRow(row);
      }
      return Buffer.from(await wb.xlsx.writeBuffer());
    };
    const b = await load(
      await book([
        [
          'Orders',
          [
            ['id', 'qty'],
            ['1', '5'],
            ['2', '6'],
          ],
        ],
        [
          'People',
          [
            ['name', 'age'],
            ['ann', '30'],
          ],
        ],
        ['Old', [['x'], ['1']]],
      ]),
      'xlsx',
    );
    const t = await load(
      await book([
        [
          'People',
          [
            ['name', 'age', 'city'],
            ['ann', '31', 'Oslo'],
            ['bob', '40', 'Rome'],
          ],
        ],
        [
          'Orders',
          [
            ['id', 'qty'],
            ['2', '6'],
            ['1', '5'],
          ],
        ],
        ['New', [['y'], ['2']]],
      ]),
      'xlsx',
    );
    const { summary, changes } = await compare(b, t);
    expect(summary.sheetsAdded).to.deep.equal(['New']);
    expect(summary.sheetsRemoved).to.deep.equal(['Old']);
    expect(summary.sheets.map((s) => [s.name, s.added, s.removed, s.changed, s.unchanged])).to.deep.equal([
      ['People', 1, 0, 1, 0],
      ['Orders', 0, 0, 0, 2],
    ]);
    expect(summary.columnsAdded).to.deep.equal(['People!city', 'New!y']);
    expect(summary.columnsRemoved).to.deep.equal(['Old!x']);
    expect(changes.filter((c) => c.kind === 'changed')).to.deep.equal([
      {
        sheet: 'People',
        kind: 'changed',
        key: { name: 'ann' },
        baseRow: 2,
        targetRow: 2,
        columns: [{ column: 'age', old: '30', new: '31' }],
      },
    ]);
  });
});
