/**
 * Random pairs of small tables for the comparison engine's tests (./engine.test.ts on loaded tables,
 * ./engineLazy.test.ts on the lazy CSV path), checked against the reference (./reference.ts): shuffled rows,
 * reordered / added / removed / retyped columns, duplicates, nulls, blank rows, keyed and keyless. Seeded, so a failing pair
 * can be replayed.
 */
import type { Cell, Table } from './reference';

/** a seeded generator, so a failing pair can be replayed */
export function rng(seed: number) {
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

/**
 * Blank rows (every cell empty) inside the table, sometimes one more: they are rows, with no key. The last row
 * is never blank (blank lines at the end of a file are no rows).
 */
function blankRowsInside(r: Rng, t: Table): void {
  if (t.rows.length > 0 && t.header.length > 0 && r.chance(0.25)) {
    t.rows.splice(
      r.int(t.rows.length),
      0,
      t.header.map(() => ''),
    );
  }
  const last = t.rows[t.rows.length - 1];
  if (last && last.every((c) => c === '' || c === null)) (last as Cell[])[r.int(last.length)] = 'NA';
}

export function shuffle<T>(r: Rng, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

export function randomPair(seed: number): { base: Table; target: Table; keyColumns?: string[] } {
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
  blankRowsInside(r, base);
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
  blankRowsInside(r, target);
  let keyColumns: string[] | undefined;
  const shared = tHeader.filter((h) => base.header.includes(h));
  if (shared.length > 0 && r.chance(0.3)) keyColumns = [r.pick(shared)];
  if (shared.length > 1 && r.chance(0.1)) keyColumns = shared.slice(0, 2);
  return { base, target, keyColumns };
}

export function csv(t: Table): string {
  return [t.header, ...t.rows].map((row) => row.map((c) => c ?? '').join(',')).join('\n') + '\n';
}
