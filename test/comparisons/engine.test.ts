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
  type Engine,
  type LoadedVersion,
} from '../../domain/reports/engine';
import type { FileFormat } from '../../domain/files/formats';
import {
  compareVersions,
  inferTypes,
  MissingKeyColumn,
  type RowChange,
} from '../../domain/comparisons/engine';
import { compareRef, type Cell, type Table } from './reference';

const workDir = path.join(os.tmpdir(), `compare-test-${process.pid}`);

/** a seeded generator, so a failing pair can be replayed */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof rng>;

const VOCAB: Record<string, readonly string[]> = {
  integer: ['1', '2', '3', '01', ' 7', '-4', '10', '+2'],
  decimal: ['1.5', '2.0', '1', '3.25', '.5', '1e1', '10'],
  boolean: ['yes', 'no', 'TRUE', 'false', 'Yes'],
  date: ['2024-01-01', '2024-02-29', '2023-12-31'],
  datetime: [
    '2024-01-01 00:00',
    '2024-01-01T10:30:00',
    '2024-01-01',
    '2024-01-01T10:30:00Z',
    '2024-01-01T12:30:00+02:00',
  ],
  text: ['a', 'b', 'a ', 'A', 'x y', '1', 'yes'],
};
const NULLS = ['', '', 'NA', 'null', ' '];
const POOL: Array<{ name: string; kind: string }> = [
  { name: 'id', kind: 'id' },
  { name: 'name', kind: 'text' },
  { name: 'qty', kind: 'integer' },
  { name: 'price', kind: 'decimal' },
  { name: 'when', kind: 'datetime' },
  { name: 'day', kind: 'date' },
  { name: 'flag', kind: 'boolean' },
  { name: 'sku code', kind: 'id' },
  { name: 'note', kind: 'text' },
];

function cell(r: Rng, kind: string, rowIndex: number): Cell {
  if (kind === 'id') return r.chance(0.05) ? r.pick(NULLS) : String(rowIndex + 1);
  if (r.chance(0.12)) return r.pick(NULLS);
  return r.pick(VOCAB[kind]);
}

function noBlankRows(r: Rng, t: Table): void {
  for (const row of t.rows) {
    if (row.every((c) => c === '' || c === null)) (row as Cell[])[r.int(row.length)] = 'NA';
  }
}

function shuffle<T>(r: Rng, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

function randomPair(seed: number): { base: Table; target: Table; keyColumns?: string[] } {
  const r = rng(seed);
  // a clean pair has a column that stays unique (an inferred key); a messy one has duplicates everywhere
  const clean = r.chance(0.4);
  let cols = shuffle(r, [...POOL]).slice(0, 1 + r.int(5));
  if (clean && !cols.some((c) => c.name === 'id')) cols = [POOL[0], ...cols];
  const n = r.int(14);
  const base: Table = {
    header: cols.map((c) => c.name),
    rows: Array.from({ length: n }, (_, i) => cols.map((c) => cell(r, c.kind, i))),
  };
  // duplicates in base
  if (!clean && n > 0 && r.chance(0.45)) base.rows.push([...base.rows[r.int(n)]]);
  if (clean) base.rows.forEach((row, i) => (row[base.header.indexOf('id')] = String(i + 1)));
  noBlankRows(r, base);
  // target: copy, then mutate
  let tHeader = [...base.header];
  let tRows = base.rows.map((row) => [...row]);
  const kindOf = (name: string) => POOL.find((p) => p.name === name)!.kind;
  // change cells
  for (const row of tRows) {
    if (r.chance(0.25)) {
      const j = r.int(tHeader.length);
      if (clean && tHeader[j] === 'id') continue;
      row[j] = cell(r, kindOf(tHeader[j]), r.int(20));
    }
  }
  // remove rows
  tRows = tRows.filter(() => !r.chance(0.15));
  // add rows (some duplicates)
  for (let i = 0, m = r.int(4); i < m; i++) {
    tRows.push(
      !clean && r.chance(0.3) && tRows.length > 0
        ? [...tRows[r.int(tRows.length)]]
        : tHeader.map((h) => cell(r, kindOf(h), 20 + i)),
    );
  }
  // retype a column
  if (r.chance(0.2) && tHeader.length > 0) {
    const j = r.int(tHeader.length);
    const kind = r.pick(['text', 'decimal', 'integer', 'datetime']);
    if (!(clean && tHeader[j] === 'id'))
      for (const row of tRows) if (r.chance(0.5)) row[j] = r.pick(VOCAB[kind]);
  }
  // remove a column
  if (r.chance(0.2) && tHeader.length > 1) {
    const j = r.int(tHeader.length);
    tHeader = tHeader.filter((_, i) => i !== j);
    tRows = tRows.map((row) => row.filter((_, i) => i !== j));
  }
  // add a column
  if (r.chance(0.2)) {
    const extra = POOL.find((p) => !tHeader.includes(p.name) && !base.header.includes(p.name));
    if (extra) {
      tHeader.push(extra.name);
      tRows.forEach((row, i) => row.push(cell(r, extra.kind, i)));
    }
  }
  // reorder columns
  const order = shuffle(
    r,
    tHeader.map((_, i) => i),
  );
  tHeader = order.map((i) => tHeader[i]);
  tRows = tRows.map((row) => order.map((i) => row[i]));
  // shuffle rows
  shuffle(r, tRows);
  const target: Table = { header: tHeader, rows: tRows };
  noBlankRows(r, target);
  let keyColumns: string[] | undefined;
  const shared = tHeader.filter((h) => base.header.includes(h));
  if (shared.length > 0 && r.chance(0.3)) keyColumns = [r.pick(shared)];
  if (shared.length > 1 && r.chance(0.1)) keyColumns = shared.slice(0, 2);
  return { base, target, keyColumns };
}

function csv(t: Table): string {
  return [t.header, ...t.rows].map((row) => row.map((c) => c ?? '').join(',')).join('\n') + '\n';
}

let engine: Engine;
let seq = 0;

async function load(t: Table | Buffer, format: FileFormat = 'csv'): Promise<LoadedVersion> {
  const file = path.join(workDir, `t${++seq}.${format}`);
  const bytes = Buffer.isBuffer(t) ? t : Buffer.from(csv(t));
  await writeFile(file, bytes);
  return loadVersion(engine.conn, fileSource(file, { format, delimiter: null, sizeBytes: bytes.length }), {
    maxColumns: 100,
    maxRows: 100_000,
    workDir,
    tablePrefix: `v${seq}_`,
  });
}

async function compare(base: LoadedVersion, target: LoadedVersion, keyColumns?: string[]) {
  const changes: RowChange[] = [];
  const summary = await compareVersions(
    engine.conn,
    base,
    target,
    await inferTypes(engine.conn, base),
    await inferTypes(engine.conn, target),
    { keyColumns, onChanges: (c) => void changes.push(...c) },
  );
  return { summary, changes };
}

function withoutChanges<T extends { changes: unknown }>(r: T): Omit<T, 'changes'> {
  const { changes: _changes, ...rest } = r;
  return rest;
}

function canonical(changes: Array<Omit<RowChange, 'sheet'>>): string[] {
  return changes.map((c) => JSON.stringify([c.kind, c.key, c.baseRow, c.targetRow, c.columns])).sort();
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
    const matchings = { key: 0, inferred_key: 0, multiset: 0 };
    for (let seed = 1; seed <= 240; seed++) {
      const { base, target, keyColumns } = randomPair(seed);
      const expected = compareRef(base, target, keyColumns);
      const b = await load(base);
      const t = await load(target);
      const { summary, changes } = await compare(b, t, keyColumns);
      const s = summary.sheets[0];
      const label = `seed ${seed}\nbase:\n${csv(base)}target:\n${csv(target)}key: ${JSON.stringify(keyColumns)}`;
      expect(
        {
          matching: s.matching,
          keyColumns: s.keyColumns,
          added: s.added,
          removed: s.removed,
          changed: s.changed,
          unchanged: s.unchanged,
          columnsAdded: s.columnsAdded,
          columnsRemoved: s.columnsRemoved,
          typeChanges: s.typeChanges,
        },
        label,
      ).to.deep.equal(withoutChanges(expected));
      expect(canonical(changes), label).to.deep.equal(canonical(expected.changes));
      expect(s.added + s.changed + s.unchanged).to.equal(target.rows.length);
      expect(s.removed + s.changed + s.unchanged).to.equal(base.rows.length);
      matchings[s.matching]++;
      for (const v of [b, t]) for (const sh of v.sheets) await engine.conn.run(`DROP TABLE ${sh.table}`);
    }
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
