/**
 * A small, obviously correct comparison written straight from the rules in README "Comparisons", in plain
 * JavaScript over arrays of cells — the test suite checks the DuckDB engine against it.
 */
export type Cell = string | null;
export interface Table {
  header: string[];
  rows: Cell[][];
}
export type Type = 'integer' | 'decimal' | 'boolean' | 'date' | 'datetime' | 'text';

export interface RefChange {
  kind: 'added' | 'removed' | 'changed';
  key: Record<string, string | null> | null;
  baseRow: number | null;
  targetRow: number | null;
  columns: Array<{ column: string; old: string | null; new: string | null }> | null;
}

export interface RefResult {
  matching: 'key' | 'inferred_key' | 'multiset';
  keyColumns: string[];
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  columnsAdded: string[];
  columnsRemoved: string[];
  typeChanges: Array<{ column: string; from: Type; to: Type }>;
  changes: RefChange[];
}

const NULLS = ['', 'null', 'n/a', 'na', '#n/a', 'nan'];

export function isNull(v: Cell): boolean {
  if (v === null) return true;
  if (v.trim() === '') return true;
  return v.length <= 12 && NULLS.includes(v.trim().toLowerCase());
}

function validDate(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

const DT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?)? *$/;

/** the instant in ms (UTC; an offset applied), or null */
function instant(v: string): number | null {
  const m = DT.exec(v.trim());
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (!validDate(y, mo, d)) return null;
  const h = Number(m[4] ?? 0);
  const mi = Number(m[5] ?? 0);
  const s = Number(m[6] ?? 0);
  if (h > 23 || mi > 59 || s > 59) return null;
  let ms = Date.UTC(y, mo - 1, d, h, mi, s) + (m[7] ? Number(`0.${m[7]}`) * 1000 : 0);
  const zone = m[8];
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
    // an offset within ±18:00, its minutes below 60
    if (Number(digits.slice(2)) > 59 || minutes > 18 * 60) return null;
    ms -= sign * minutes * 60_000;
  }
  return ms;
}

export function classOf(raw: string): Type {
  const v = raw.replace(/^ +/, '');
  if (/^[0-9+\-.]/.test(v)) {
    if (/^[+-]?[0-9]+ *$/.test(v)) {
      const n = BigInt(v.trim());
      if (n >= -(2n ** 63n) && n < 2n ** 63n) return 'integer';
    }
    if (
      /^[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)? *$/.test(v) &&
      Number.isFinite(Number(v.trim()))
    )
      return 'decimal';
    if (/^\d{4}-\d{2}-\d{2} *$/.test(v) && instant(v) !== null) return 'date';
    if (/^\d{4}-\d{2}-\d{2}[T ]/.test(v) && instant(v) !== null) return 'datetime';
    return 'text';
  }
  if (['true', 'false', 'yes', 'no'].includes(v.trim().toLowerCase())) return 'boolean';
  return 'text';
}

export function inferColumn(values: Cell[]): Type {
  const classes = values.filter((v) => !isNull(v)).map((v) => classOf(v!));
  if (classes.length === 0) return 'text';
  const all = (...ts: Type[]) => classes.every((c) => ts.includes(c));
  if (all('integer')) return 'integer';
  if (all('integer', 'decimal')) return 'decimal';
  if (all('boolean')) return 'boolean';
  if (all('date')) return 'date';
  if (all('date', 'datetime')) return 'datetime';
  return 'text';
}

function widen(a: Type, b: Type): Type {
  if (a === b) return a;
  if ([a, b].includes('integer') && [a, b].includes('decimal')) return 'decimal';
  if ([a, b].includes('date') && [a, b].includes('datetime')) return 'datetime';
  return 'text';
}

/** the compared value as a string; null for null */
function norm(v: Cell, type: Type): string | null {
  if (isNull(v)) return null;
  const t = v!.trim();
  switch (type) {
    case 'integer':
      return classOf(v!) === 'integer' ? BigInt(t).toString() : `\u0002${v}`;
    case 'decimal':
      return ['integer', 'decimal'].includes(classOf(v!)) ? String(Number(t) + 0) : `\u0002${v}`;
    case 'boolean':
      return ['true', 'yes'].includes(t.toLowerCase()) ? 'true' : 'false';
    case 'date':
    case 'datetime':
      return String(instant(t));
    case 'text':
      return v;
  }
}

export function keyRankRef(name: string): number {
  const n = name.trim();
  if (n.toLowerCase() === 'id') return 0;
  if (/(^|[^a-z0-9])(id|uuid|guid|key|code)$/i.test(n) || /[a-z0-9](Id|ID|Uuid|UUID|Key|Code)$/.test(n))
    return 1;
  return 2;
}

export function compareRef(base: Table, target: Table, keyColumns?: string[]): RefResult {
  const col = (t: Table, name: string) => t.rows.map((r) => r[t.header.indexOf(name)] ?? null);
  const bTypes = new Map(base.header.map((h) => [h, inferColumn(col(base, h))]));
  const tTypes = new Map(target.header.map((h) => [h, inferColumn(col(target, h))]));
  const shared = target.header.filter((h) => base.header.includes(h));
  const typeOf = new Map(shared.map((h) => [h, widen(bTypes.get(h)!, tTypes.get(h)!)]));
  const normRow = (t: Table, r: Cell[]) =>
    new Map(shared.map((h) => [h, norm(r[t.header.indexOf(h)] ?? null, typeOf.get(h)!)]));
  const bNorm = base.rows.map((r) => normRow(base, r));
  const tNorm = target.rows.map((r) => normRow(target, r));

  let matching: RefResult['matching'] = 'multiset';
  let keys: string[] = [];
  if (keyColumns && keyColumns.length > 0) {
    matching = 'key';
    keys = keyColumns;
  } else if (base.rows.length > 0 && target.rows.length > 0) {
    // blank rows (every cell empty) have no key and do not count against one
    const blank = (t: Table) => t.rows.map((r) => r.every((c) => c === null || c === ''));
    const [bBlank, tBlank] = [blank(base), blank(target)];
    const unique = (rows: Array<Map<string, string | null>>, isBlank: boolean[], h: string) => {
      const vs = rows.filter((_, i) => !isBlank[i]).map((r) => r.get(h));
      return vs.length > 0 && vs.every((v) => v !== null) && new Set(vs).size === vs.length;
    };
    const candidates = shared
      .filter((h) => unique(bNorm, bBlank, h) && unique(tNorm, tBlank, h))
      .map((h) => ({ h, rank: keyRankRef(h), pos: target.header.indexOf(h) }))
      .sort((a, b) => a.rank - b.rank || a.pos - b.pos);
    if (candidates.length > 0) {
      matching = 'inferred_key';
      keys = [candidates[0].h];
    }
  }
  const keyed = matching !== 'multiset';
  const keyCols = keyed ? keys : shared;
  const keyOf = (r: Map<string, string | null>) => JSON.stringify(keyCols.map((h) => r.get(h)));
  const groups = (rows: Array<Map<string, string | null>>) => {
    const g = new Map<string, number[]>();
    rows.forEach((r, i) => {
      const k = keyOf(r);
      if (!g.has(k)) g.set(k, []);
      g.get(k)!.push(i);
    });
    return g;
  };
  const bg = groups(bNorm);
  const tg = groups(tNorm);
  const raw = (t: Table, i: number, h: string) => {
    const v = t.rows[i][t.header.indexOf(h)];
    return v === '' || v === undefined ? null : v;
  };
  const keyRaw = (t: Table, i: number) =>
    keyed ? Object.fromEntries(keys.map((h) => [h, raw(t, i, h)])) : null;
  const result: RefResult = {
    matching,
    keyColumns: keyed ? keys : [],
    added: 0,
    removed: 0,
    changed: 0,
    unchanged: 0,
    columnsAdded: target.header.filter((h) => !base.header.includes(h)),
    columnsRemoved: base.header.filter((h) => !target.header.includes(h)),
    typeChanges: shared
      .filter((h) => bTypes.get(h) !== tTypes.get(h))
      .map((h) => ({ column: h, from: bTypes.get(h)!, to: tTypes.get(h)! })),
    changes: [],
  };
  const valueCols = keyed ? shared.filter((h) => !keys.includes(h)) : [];
  for (const [k, ts] of tg) {
    const bs = bg.get(k) ?? [];
    ts.forEach((ti, n) => {
      const bi = bs[n];
      if (bi === undefined) {
        result.added++;
        result.changes.push({
          kind: 'added',
          key: keyRaw(target, ti),
          baseRow: null,
          targetRow: ti + 2,
          columns: null,
        });
        return;
      }
      const differing = valueCols.filter((h) => bNorm[bi].get(h) !== tNorm[ti].get(h));
      if (differing.length === 0) result.unchanged++;
      else {
        result.changed++;
        result.changes.push({
          kind: 'changed',
          key: keyRaw(target, ti),
          baseRow: bi + 2,
          targetRow: ti + 2,
          columns: differing.map((h) => ({ column: h, old: raw(base, bi, h), new: raw(target, ti, h) })),
        });
      }
    });
  }
  for (const [k, bs] of bg) {
    const ts = tg.get(k) ?? [];
    bs.slice(ts.length).forEach((bi) => {
      result.removed++;
      result.changes.push({
        kind: 'removed',
        key: keyRaw(base, bi),
        baseRow: bi + 2,
        targetRow: null,
        columns: null,
      });
    });
  }
  return result;
}
