/**
 * The comparison engine as the worker runs it on CSV files (domain/comparisons/run.ts): versions loaded
 * `lazy` (views over the downloaded copies, cells classified in the checking pass) and the per-version
 * steps on two connections — against the reference (./reference.ts) on the same random pairs as
 * ./engine.test.ts (./randomPairs.ts), and against the loaded tables on a file large enough to be
 * read in several buffers by several threads (row numbers must not move between reads).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { onEach } from '../../common/lanes';
import {
  AnalysisFailure,
  fileSource,
  loadVersion,
  openEngine,
  type Engine,
  type LoadedVersion,
} from '../../domain/reports/engine';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  compareVersions,
  inferTypes,
  stageLines,
  UncheckedReadFailed,
  type RowChange,
  type SheetTypes,
} from '../../domain/comparisons/engine';
import type { Table } from './reference';
import { csv, randomPair, rng, shuffle } from './randomPairs';
import { expectAgreementOnRandomPairs } from './agreement';

const workDir = path.join(os.tmpdir(), `compare-lazy-test-${process.pid}`);

let engine: Engine;
let other: DuckDBConnection;
let seq = 0;

/** The two connections a comparison runs on (the worker's pair): each lane of the random pairs has its own. */
interface Lane {
  conn: DuckDBConnection;
  other: DuckDBConnection;
}
let lanes: Lane[];

/** `unchecked`: as the worker loads a version whose types come from its report (no checking pass). */
async function load(
  t: Table | string,
  lazy = true,
  unchecked = false,
  lane = lanes[0],
): Promise<LoadedVersion> {
  const n = ++seq; // read once: the lanes load side by side
  const file = path.join(workDir, `t${n}.csv`);
  const bytes = Buffer.from(typeof t === 'string' ? t : csv(t));
  await writeFile(file, bytes);
  return loadVersion(
    n % 2 === 0 ? lane.other : lane.conn,
    fileSource(file, { format: 'csv', delimiter: null, sizeBytes: bytes.length }),
    {
      maxColumns: 100,
      xlsxLimits: null,
      maxRows: 1_000_000,
      workDir,
      tablePrefix: `v${n}_`,
      lazy,
      classify: lazy && !unchecked,
      skipCheck: unchecked,
    },
  );
}

async function compare(
  base: LoadedVersion,
  target: LoadedVersion,
  keyColumns?: string[],
  two = true,
  types?: [SheetTypes, SheetTypes],
  lane = lanes[0],
) {
  const changes: RowChange[] = [];
  const summary = await compareVersions(
    lane.conn,
    base,
    target,
    types?.[0] ?? (await inferTypes(lane.conn, base)),
    types?.[1] ?? (await inferTypes(lane.conn, target)),
    {
      keyColumns,
      other: two ? lane.other : undefined,
      onChanges: (c) => void changes.push(...c.map((t) => JSON.parse(t) as RowChange)),
    },
  );
  return { summary, changes };
}

async function drop(...versions: LoadedVersion[]): Promise<void> {
  await dropOn(lanes[0].conn, ...versions);
}

async function dropOn(conn: DuckDBConnection, ...versions: LoadedVersion[]): Promise<void> {
  for (const v of versions) {
    for (const sh of v.sheets) {
      const view = await conn.runAndReadAll(
        `SELECT count(*)::INTEGER AS n FROM duckdb_views() WHERE view_name = '${sh.table}'`,
      );
      const isView = (view.getRowObjectsJS()[0] as { n: number }).n > 0;
      await conn.run(`DROP ${isView ? 'VIEW' : 'TABLE'} ${sh.table}`);
    }
  }
}

describe('comparison engine, lazy CSV loads (as the worker runs it)', function () {
  this.timeout(300_000);

  before(async () => {
    await mkdir(workDir, { recursive: true });
    engine = await openEngine({
      threads: 2,
      memoryLimitMb: 256,
      tempDirectory: path.join(workDir, 'duckdb'),
    });
    other = await engine.connect();
    lanes = [
      { conn: engine.conn, other },
      { conn: await engine.connect(), other: await engine.connect() },
    ];
  });
  after(async () => {
    engine?.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it('agrees with the reference on 240 random pairs of small tables (every count and every change)', async () => {
    let views = 0;
    // the lazy views' rows read back both ways: by line (the files hold no quote: lines.ts) for every other
    // pair, by DuckDB through the numbered view for the others
    let byLine = 0;
    let byDuckDb = 0;
    let pair = 0;
    // two pairs at once, each lane on its own two connections
    const matchings = await expectAgreementOnRandomPairs(
      async ({ base, target, keyColumns }, i) => {
        const lane = lanes[i];
        const b = await load(base, true, false, lane);
        const t = await load(target, true, false, lane);
        const lines = pair++ % 2 === 0;
        for (const v of [b, t]) {
          const sheet = v.sheets[0];
          if (!sheet.classes) continue;
          views++;
          expect(sheet.lines).to.not.equal(undefined);
          if (lines) byLine++;
          else {
            delete sheet.lines;
            byDuckDb++;
          }
        }
        const result = await compare(b, t, keyColumns, true, undefined, lane);
        await dropOn(lane.conn, b, t);
        return result;
      },
      240,
      2,
    );
    console.log(
      '      matchings:',
      JSON.stringify(matchings),
      'lazy views:',
      views,
      'read back by line:',
      byLine,
      'by DuckDB:',
      byDuckDb,
    );
    expect(matchings.key).to.be.greaterThan(20);
    expect(matchings.inferred_key).to.be.greaterThan(20);
    expect(matchings.multiset).to.be.greaterThan(20);
    // most small files take the fast path (the others, e.g. with a blank line, load into tables)
    expect(views).to.be.greaterThan(300);
    expect(byLine).to.be.greaterThan(150);
    expect(byDuckDb).to.be.greaterThan(150);
  });

  it('rows read back by line from a quote-free copy: the same result as DuckDB reading them again', async () => {
    // CRLF and LF endings, no final line feed, fewer cells than the header (null padding), empty and blank
    // cells, a TSV, non-ASCII text
    const pairs: Array<[string, string, string | undefined]> = [
      ['id,a,b\r\n1,x,y\r\n2,,z\r\n3,p,q\r\n', 'id,a,b\r\n1,x,Y\r\n3,p\r\n4,n,m\r\n2, ,z', undefined],
      ['id,a,b\n1,x,y\n2,,\n3,é,ü', 'id,b,a\n3,ü,é\n2,, \n1,y,x\n5,,\n', 'id'],
      ['id\ta\n1\tx\n2\ty\n', 'id\ta\n2\ty \n1\tx\n', undefined],
      ['a,b\n1,2\n1,2\n3,4\n', 'a,b\n1,2\n3,5\n', undefined],
    ];
    for (const [i, [baseText, targetText, key]] of pairs.entries()) {
      const tsv = baseText.includes('\t');
      const loadText = async (text: string) => {
        const file = path.join(workDir, `lines${++seq}.${tsv ? 'tsv' : 'csv'}`);
        await writeFile(file, text);
        return loadVersion(
          seq % 2 === 0 ? other : engine.conn,
          fileSource(file, {
            format: tsv ? 'tsv' : 'csv',
            delimiter: tsv ? '\t' : ',',
            sizeBytes: text.length,
          }),
          {
            maxColumns: 100,
            xlsxLimits: null,
            maxRows: 1000,
            workDir,
            tablePrefix: `v${seq}_`,
            lazy: true,
            classify: true,
          },
        );
      };
      const keyColumns = key ? [key] : undefined;
      const [b, t] = [await loadText(baseText), await loadText(targetText)];
      for (const v of [b, t]) expect(v.sheets[0].lines, `pair ${i}`).to.not.equal(undefined);
      const byLine = await compare(b, t, keyColumns);
      for (const v of [b, t]) delete v.sheets[0].lines; // DuckDB reads the rows back
      const byDuckDb = await compare(b, t, keyColumns);
      expect(byLine.changes.length, `pair ${i}`).to.be.greaterThan(0);
      expect(byLine, `pair ${i}`).to.deep.equal(byDuckDb);
      await drop(b, t);
    }
  });

  it('a title and an empty line above the header (headerRow 3): every way a CSV is loaded and read back numbers its rows from 4, as a spreadsheet shows them', async () => {
    // the object: a title, an empty line, then the table (linesBeforeHeader 2, the header shown on row 3)
    const titled = (table: string) => `Quarterly report\n\n${table}`;
    const loadTitled = async (table: string, lazy: boolean, skipCheck = false) => {
      const text = titled(table);
      const file = path.join(workDir, `titled${++seq}.csv`);
      await writeFile(file, text);
      return loadVersion(
        seq % 2 === 0 ? other : engine.conn,
        fileSource(file, {
          format: 'csv',
          delimiter: ',',
          sizeBytes: text.length,
          linesBeforeHeader: 2,
          headerRow: 3,
        }),
        {
          maxColumns: 100,
          xlsxLimits: null,
          maxRows: 1000,
          workDir,
          tablePrefix: `v${seq}_`,
          lazy,
          classify: lazy && !skipCheck,
          skipCheck,
        },
      );
    };
    const plain = 'id,a\n1,x\n2,y\n3,z\n';
    const quotedCell = 'id,a\n1,x\n2,"y, q"\n3,z\n'; // quotes: read back by DuckDB, not by line
    const quotedHeader = '"id","a"\n1,x\n2,y\n3,z\n'; // a quoted header: the normalising pass
    const numbers = async (v: LoadedVersion) =>
      (
        await engine.conn.runAndReadAll(
          `SELECT ${v.sheets[0].rowNumberColumn} AS n FROM ${v.sheets[0].table} ORDER BY 1`,
        )
      )
        .getRowObjectsJS()
        .map((r) => Number(r.n));
    for (const [label, table, lazy] of [
      ['lazy view, read back by line', plain, true],
      ['lazy view, read back by DuckDB', quotedCell, true],
      ['fast table', plain, false],
      ['normalising pass', quotedHeader, false],
    ] as const) {
      const base = await loadTitled(table, lazy);
      expect(await numbers(base), label).to.deep.equal([4, 5, 6]);
      expect(
        base.sheets[0].columns.map((c) => c.name),
        label,
      ).to.deep.equal(['id', 'a']);
      const target = await loadTitled(table.replace('3,z', '3,w'), lazy);
      const { changes } = await compare(base, target, ['id']);
      expect(
        changes.map((c) => [c.kind, c.baseRow, c.targetRow]),
        label,
      ).to.deep.equal([['changed', 6, 6]]);
      await drop(base, target);
    }
    // loaded unchecked (types from the reports): the first pass counts, the rows still start at 4
    const [b, t] = [
      await loadTitled(plain, true, true),
      await loadTitled('id,a\n1,x\n2,v\n3,z\n', true, true),
    ];
    const types = [await inferTypes(engine.conn, b), await inferTypes(engine.conn, t)] as [
      SheetTypes,
      SheetTypes,
    ];
    const { changes } = await compare(b, t, ['id'], true, types);
    expect(changes.map((c) => [c.kind, c.baseRow, c.targetRow])).to.deep.equal([['changed', 5, 5]]);
    await drop(b, t);
  });

  it('semicolon versions compare decimal commas as numbers and day-first dates as dates, comma versions grouped thousands as numbers: read back by line, by DuckDB and from loaded tables alike', async () => {
    const baseText =
      'id;amount;label;day\n1;1,5;a,b;15.03.2024\n2;2,5;x;1.2.2024\n3;1.234,5;y;01.01.2000\n4;7;1,5 kg;31.12.1999\n';
    const targetText =
      'id;amount;label;day\n4;7,0;1,5 kg;31/12/1999\n3;1234,50;y;1.1.2000\n2;3,5;x;01.02.2024\n1;1,50;a,c;16.03.2024\n';
    const loadText = async (text: string, lazy: boolean, delimiter = ';') => {
      const file = path.join(workDir, `notation${++seq}.csv`);
      await writeFile(file, text);
      return loadVersion(
        seq % 2 === 0 ? other : engine.conn,
        fileSource(file, { format: 'csv', delimiter, sizeBytes: text.length }),
        {
          maxColumns: 100,
          xlsxLimits: null,
          maxRows: 1000,
          workDir,
          tablePrefix: `v${seq}_`,
          lazy,
          classify: lazy,
        },
      );
    };
    const results = [];
    for (const lazy of [true, false]) {
      const [b, t] = [await loadText(baseText, lazy), await loadText(targetText, lazy)];
      if (lazy) for (const v of [b, t]) expect(v.sheets[0].lines).to.not.equal(undefined);
      results.push(await compare(b, t));
      if (lazy) {
        for (const v of [b, t]) delete v.sheets[0].lines; // DuckDB reads the rows back
        results.push(await compare(b, t));
      }
      await drop(b, t);
    }
    const [byLine, byDuckDb, loaded] = results;
    const sheet = byLine.summary.sheets[0];
    expect(sheet).to.include({ matching: 'inferred_key', changed: 2, unchanged: 2, added: 0, removed: 0 });
    expect(sheet.typeChanges).to.deep.equal([]);
    // 1,5 and 1,50 are one number, 1.234,5 and 1234,50 too, 1.2.2024 and 01.02.2024 one day; a cell that is no
    // number is compared as text
    expect(byLine.changes.map((c) => [c.key, c.columns])).to.deep.equal([
      [{ id: '2' }, [{ column: 'amount', old: '2.5', new: '3.5' }]],
      [
        { id: '1' },
        [
          { column: 'label', old: 'a,b', new: 'a,c' },
          { column: 'day', old: '2024-03-15', new: '2024-03-16' },
        ],
      ],
    ]);
    expect(byDuckDb).to.deep.equal(byLine);
    expect(loaded).to.deep.equal(byLine);

    // a comma-delimited pair with quotes: thousands grouped by commas are read without them (DuckDB reads
    // the rows back: a file with quotes has no line read-back)
    const gb = await loadText('id,amount,note\n1,"1,234.5","a,b"\n2,"2,000",x\n', true, ',');
    const gt = await loadText('id,amount,note\n2,"2,001",x\n1,1234.50,"a,b"\n', true, ',');
    expect(gb.sheets[0].lines).to.equal(undefined);
    const grouped = await compare(gb, gt);
    expect(grouped.summary.sheets[0]).to.include({ changed: 1, unchanged: 1 });
    expect(grouped.changes.map((c) => [c.key, c.columns])).to.deep.equal([
      [{ id: '2' }, [{ column: 'amount', old: '2000', new: '2001' }]],
    ]);
    await drop(gb, gt);

    // a comma-delimited pair of month-first dates (as Excel writes them in the United States): 3/5/2024 and
    // 03/05/2024 are one day, 2:30 PM is 14:30, read back by line (no quote), by DuckDB and from loaded tables
    // and currency and percent signs: $1234.5 and 1234.50, 12% and 0.12 are one number
    // and a spreadsheet's error value is null: #DIV/0! equals an empty cell
    const usBase =
      'id,day,at,price,rate,ratio\n1,3/15/2024,3/15/2024 2:30 PM,$1234.5,12%,#DIV/0!\n2,3/5/2024,12/1/2024 9:00 AM,-$5,50%,0.5\n';
    const usTarget =
      'id,day,at,price,rate,ratio\n2,03/05/2024,12/1/2024 09:00,-5.00,0.5,0.5\n1,3/16/2024,3/15/2024 14:30,1234.50,0.12,\n';
    const usResults = [];
    for (const lazy of [true, false]) {
      const [b, t] = [await loadText(usBase, lazy, ','), await loadText(usTarget, lazy, ',')];
      if (lazy) for (const v of [b, t]) expect(v.sheets[0].lines).to.not.equal(undefined);
      usResults.push(await compare(b, t));
      if (lazy) {
        for (const v of [b, t]) delete v.sheets[0].lines;
        usResults.push(await compare(b, t));
      }
      await drop(b, t);
    }
    expect(usResults[0].summary.sheets[0]).to.include({ changed: 1, unchanged: 1 });
    expect(usResults[0].summary.sheets[0].typeChanges).to.deep.equal([]);
    expect(usResults[0].changes.map((c) => [c.key, c.columns])).to.deep.equal([
      [{ id: '1' }, [{ column: 'day', old: '2024-03-15', new: '2024-03-16' }]],
    ]);
    expect(usResults[1]).to.deep.equal(usResults[0]);
    expect(usResults[2]).to.deep.equal(usResults[0]);
  });

  it('a quote anywhere in the copy, even past its first megabyte, keeps DuckDB reading the rows back', async () => {
    // base: no quote; target: the same rows, the last one changed to a quoted cell holding the delimiter, more
    // than a megabyte (one read of the download) into the file. Split at commas by line, that cell would read `"x`
    const rowsOf = (last: string) => {
      const out = ['id,a,b'];
      for (let i = 1; i <= 60_000; i++) out.push(`${i},value ${i},${i % 7}`);
      out.push(`60001,${last},0`);
      return out.join('\n') + '\n';
    };
    const base = rowsOf('plain');
    const target = rowsOf('"x,y"');
    expect(target.indexOf('"')).to.be.greaterThan(1024 * 1024);
    const b = await load(base);
    const t = await load(target);
    expect(b.sheets[0].lines).to.not.equal(undefined);
    expect(t.sheets[0].download?.facts.plain).to.equal(true);
    expect(t.sheets[0].lines).to.equal(undefined);
    const { summary, changes } = await compare(b, t, ['id']);
    expect(summary).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 60_000 });
    expect(changes).to.have.length(1);
    expect(changes[0].columns).to.deep.equal([{ column: 'a', old: 'plain', new: 'x,y' }]);
    await drop(b, t);
  });

  it('stageLines: the lines of the row numbers asked, across chunk boundaries, CR LF or LF, with or without a final line feed', async () => {
    const file = path.join(workDir, 'lines.csv');
    const lines = ['h1,h2', 'a,b', 'ccccccccccc,d', 'e,', '', 'f,gggggggggggggggggg'];
    for (const [ending, last] of [
      ['\n', ''],
      ['\r\n', '\r\n'],
      ['\n', '\n'],
    ]) {
      await writeFile(file, lines.slice(0, -1).join(ending) + ending + lines[lines.length - 1] + last);
      for (const chunk of [1, 3, 7, 64, 1024]) {
        const label = `${JSON.stringify(ending)} ${JSON.stringify(last)} chunk ${chunk}`;
        // rows numbered from 2, and from 5 (a title and notes shown above the header): the same lines
        for (const first of [2, 5]) {
          const wanted = [0, 1, 2, 4].map((k) => first + k);
          expect(
            await stageLines(engine.conn, file, wanted, 'staged', first, undefined, chunk),
            label,
          ).to.equal(true);
          const got = (
            await engine.conn.runAndReadAll('SELECT rn, line FROM staged ORDER BY rn')
          ).getRowObjectsJS();
          expect(
            got.map((r) => [Number(r.rn), r.line]),
            label,
          ).to.deep.equal(
            wanted.map((n, k) => [n, ['a,b', 'ccccccccccc,d', 'e,', 'f,gggggggggggggggggg'][k]]),
          );
          await engine.conn.run('DROP TABLE staged');
        }
        // a row number past the end: false, nothing left behind
        expect(await stageLines(engine.conn, file, [3, 7], 'staged', 2, undefined, chunk), label).to.equal(
          false,
        );
        const left = await engine.conn.runAndReadAll(
          `SELECT count(*)::INTEGER AS n FROM duckdb_tables() WHERE table_name = 'staged'`,
        );
        expect((left.getRowObjectsJS()[0] as { n: number }).n, label).to.equal(0);
      }
    }
  });

  it('versions loaded unchecked (types from their reports, no checking pass): the same results as checked loads, the rows counted by the first pass', async () => {
    let unchecked = 0;
    const checkSeed = async (seed: number, lane: Lane) => {
      const { base, target, keyColumns } = randomPair(seed);
      const b = await load(base, true, false, lane);
      const t = await load(target, true, false, lane);
      const types: [SheetTypes, SheetTypes] = [
        await inferTypes(lane.conn, b),
        await inferTypes(lane.conn, t),
      ];
      const checked = await compare(b, t, keyColumns, true, undefined, lane);
      const ub = await load(base, true, true, lane);
      const ut = await load(target, true, true, lane);
      for (const v of [ub, ut]) {
        if (v.sheets[0].unchecked) {
          unchecked++;
          expect(v.sheets[0].rowCount).to.equal(-1);
        }
      }
      const fast = await compare(ub, ut, keyColumns, true, types, lane);
      const label = `seed ${seed}`;
      expect(fast.summary, label).to.deep.equal(checked.summary);
      expect(fast.changes, label).to.deep.equal(checked.changes);
      // counted by the comparison's first pass (a file with a blank line is loaded, never unchecked)
      expect(
        [ub, ut].map((v) => v.sheets[0].unchecked === true),
        label,
      ).to.deep.equal([false, false]);
      expect([ub.sheets[0].rowCount, ut.sheets[0].rowCount], label).to.deep.equal([
        base.rows.length,
        target.rows.length,
      ]);
      await dropOn(lane.conn, b, t, ub, ut);
    };
    // two seeds at once, each lane on its own two connections; the first failure stops both, and both settle
    // before it is thrown (no query left running when the test ends)
    await onEach(
      lanes,
      Array.from({ length: 120 }, (_, i) => i + 1),
      (lane, seed) => checkSeed(seed, lane),
    );
    expect(unchecked).to.be.greaterThan(150);

    // a file the strict reader refuses though its bytes look plain (a line break inside quotes): the first
    // pass fails with UncheckedReadFailed, naming the side; loaded the checked way, it compares
    const plain = 'id,name\n1,ann\n2,bob\n';
    const quoted = 'id,name\n1,ann\n2,"bo\nb"\n';
    const types: [SheetTypes, SheetTypes] = [[['integer', 'text']], [['integer', 'text']]];
    for (const keyColumns of [['id'], undefined]) {
      const ub = await load(plain, true, true);
      const ut = await load(quoted, true, true);
      expect(ut.sheets[0].unchecked).to.equal(true);
      let failed: unknown;
      try {
        await compare(ub, ut, keyColumns, true, types);
      } catch (err) {
        failed = err;
      }
      expect(failed).to.be.instanceOf(UncheckedReadFailed);
      expect((failed as UncheckedReadFailed).sides).to.deep.equal(['target']);
      // DuckDB's error (which may quote the refused line) is not carried
      expect((failed as Error).cause).to.equal(undefined);
      const ct = await load(quoted);
      const again = await compare(ub, ct, keyColumns, true, types);
      expect(again.summary.sheets[0]).to.deep.include({ changed: 1, unchanged: 1, added: 0, removed: 0 });
      await drop(ub, ut, ct);
    }
    // both refused: the error names both versions
    for (const keyColumns of [['id'], undefined]) {
      const ub = await load(quoted, true, true);
      const ut = await load(quoted.replace('bo\nb', 'bo\nbby'), true, true);
      let failed: unknown;
      try {
        await compare(ub, ut, keyColumns, true, types);
      } catch (err) {
        failed = err;
      }
      expect(failed).to.be.instanceOf(UncheckedReadFailed);
      expect((failed as UncheckedReadFailed).sides).to.deep.equal(['base', 'target']);
      await drop(ub, ut);
    }

    // the load did not count an unchecked version: its first pass enforces the row limit
    const ub = await load(plain, true, true);
    const ut = await load(plain, true, true);
    let refused: unknown;
    try {
      await compareVersions(engine.conn, ub, ut, types[0], types[1], { other, maxRows: 1 });
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(AnalysisFailure);
    expect((refused as AnalysisFailure).reason).to.equal('too_many_rows');
    await drop(ub, ut);
  });

  it('a file read in several buffers by several threads: the same result as the loaded tables', async () => {
    const r = rng(99);
    const n = 200_000;
    const line = (id: number) =>
      `${id},"name ${r.int(5000)}, quoted",${r.int(1000)},${(r.next() * 100).toFixed(2)},2024-0${1 + r.int(9)}-1${r.int(10)}`;
    const baseRows = Array.from({ length: n }, (_, i) => line(i + 1));
    const targetRows = baseRows
      .filter(() => !r.chance(0.01))
      .map((l) => (r.chance(0.01) ? line(Number(l.split(',')[0])) : l));
    for (let i = 0; i < 500; i++) targetRows.push(line(n + 1 + i));
    shuffle(r, targetRows);
    const header = 'id,name,qty,price,day\n';
    const baseCsv = header + baseRows.join('\n') + '\n';
    const targetCsv = header + targetRows.join('\n') + '\n';
    expect(baseCsv.length).to.be.greaterThan(8 * 1024 * 1024); // more than two of the view's 4 MB buffers
    for (const keyColumns of [['id'], undefined]) {
      const lb = await load(baseCsv);
      const lt = await load(targetCsv);
      expect(lb.sheets[0].classes).to.be.an('array');
      // the base lists ids 1, 2, … in file order: each row's number is its line in the file (id + 1)
      const misplaced = await engine.conn.runAndReadAll(
        `SELECT count(*)::INTEGER AS n FROM ${lb.sheets[0].table} WHERE row_number <> CAST(c1 AS BIGINT) + 1`,
      );
      expect(misplaced.getRowObjectsJS()[0].n).to.equal(0);
      const lazy = await compare(lb, lt, keyColumns);
      const tb = await load(baseCsv, false);
      const tt = await load(targetCsv, false);
      expect(tb.sheets[0].classes).to.equal(undefined);
      const tables = await compare(tb, tt, keyColumns, false);
      expect(lazy.summary).to.deep.equal(tables.summary);
      expect(lazy.changes).to.deep.equal(tables.changes);
      expect(lazy.summary.changed + lazy.summary.added + lazy.summary.removed).to.be.greaterThan(1000);
      await drop(lb, lt, tb, tt);
    }
  });
});
