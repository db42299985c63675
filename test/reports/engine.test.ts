/**
 * The analysis engine on small hand-made files: every statistic checked against values worked out here.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import ExcelJS from 'exceljs';
import * as yauzl from 'yauzl';
import {
  AnalysisFailure,
  fileSource,
  loadVersion,
  openEngine,
  runAnalysis,
  typedSql,
  type Engine,
  type AnalysisResult,
  type AnalysisStep,
  type ColumnProfile,
} from '../../domain/reports/engine';
import { plainDecimal } from '../../domain/reports/engine/load';
import { rulesStep, type BuildRule, type QualitySection } from '../../domain/rules/evaluate';
import type { FileFormat } from '../../domain/files/formats';
import type { XlsxLimits } from '../../domain/files/xlsx';
import {
  chartSheetWorkbook,
  CONTENT_TYPES_XML,
  invoiceWorkbook,
  oneSheetWorkbook,
  XLSX_TEST_LIMITS,
  zip,
} from '../helpers/files';

const workDir = path.join(os.tmpdir(), `engine-test-${process.pid}`);

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
function sampleSd(xs: number[]): number {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}
/** linear interpolation between the two nearest ranks (pandas' default) */
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (pos - lo) * (s[hi] - s[lo]);
}
function expectNumeric(col: ColumnProfile, xs: number[]): void {
  expect(col.nonNull).to.equal(xs.length);
  expect(col.min).to.equal(Math.min(...xs));
  expect(col.max).to.equal(Math.max(...xs));
  expect(col.mean).to.be.closeTo(mean(xs), 1e-9);
  expect(col.stddev).to.be.closeTo(sampleSd(xs), 1e-9);
  for (const [key, q] of [
    ['p5', 0.05],
    ['p25', 0.25],
    ['p50', 0.5],
    ['p75', 0.75],
    ['p95', 0.95],
  ] as const) {
    expect(col.quantiles![key], key).to.be.closeTo(quantile(xs, q), 1e-9);
  }
  expect(col.zeros).to.equal(xs.filter((x) => x === 0).length);
  expect(col.negatives).to.equal(xs.filter((x) => x < 0).length);
  expect(col.length).to.equal(null);
}

/** The entries of a zip, in their order (yauzl). */
function unzip(buffer: Buffer): Promise<Array<{ name: string; data: Buffer }>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (err, file) => {
      if (err) return reject(err);
      const entries: Array<{ name: string; data: Buffer }> = [];
      file.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return file.readEntry();
        file.openReadStream(entry, (openErr, stream) => {
          if (openErr) return reject(openErr);
          const parts: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => parts.push(chunk));
          stream.on('end', () => {
            entries.push({ name: entry.fileName, data: Buffer.concat(parts) });
            file.readEntry();
          });
          stream.on('error', reject);
        });
      });
      file.on('end', () => resolve(entries));
      file.on('error', reject);
      file.readEntry();
    });
  });
}

/** The workbook as written by ExcelJS, its first worksheet's XML changed by `edit`. */
async function withSheetXml(workbook: ExcelJS.Workbook, edit: (xml: string) => string): Promise<Buffer> {
  const written = await unzip(Buffer.from(await workbook.xlsx.writeBuffer()));
  return zip(
    written.map(({ name, data }) =>
      name === 'xl/worksheets/sheet1.xml' ? { name, data: edit(data.toString('utf8')) } : { name, data },
    ),
  );
}

let engine: Engine | undefined;
let counter = 0;

const SPREADSHEET_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';

/** A one-sheet workbook written part by part: its sheet data's XML and, when given, its shared strings' items. */
function workbookOf(sheetName: string, sheetData: string, sharedStrings?: string): Buffer {
  return zip([
    { name: '[Content_Types].xml', data: '<Types/>' },
    {
      name: 'xl/workbook.xml',
      data: `<workbook ${SPREADSHEET_NS}><sheets><sheet name="${sheetName}" sheetId="1"/></sheets></workbook>`,
    },
    ...(sharedStrings === undefined
      ? []
      : [{ name: 'xl/sharedStrings.xml', data: `<sst ${SPREADSHEET_NS}>${sharedStrings}</sst>` }]),
    {
      name: 'xl/worksheets/sheet1.xml',
      data: `<worksheet ${SPREADSHEET_NS}><sheetData>${sheetData}</sheetData></worksheet>`,
    },
  ]);
}

async function analyse(
  content: string | Buffer,
  format: FileFormat,
  // `oneConnection`: the profile's queries on the load's connection alone (the worker gives it a second)
  options: {
    delimiter?: string;
    maxColumns?: number;
    maxRows?: number;
    oneConnection?: boolean;
    steps?: AnalysisStep[];
    /** the upload's workbook guards, checked on the copy before it is read (as builds do); default none */
    xlsxLimits?: XlsxLimits;
  } = {},
): Promise<AnalysisResult> {
  await mkdir(workDir, { recursive: true });
  const file = path.join(workDir, `input-${counter++}.${format}`);
  await writeFile(file, content);
  engine?.close();
  engine = await openEngine({ threads: 2, memoryLimitMb: 256, tempDirectory: path.join(workDir, 'duck') });
  return runAnalysis(
    engine.conn,
    fileSource(file, {
      format,
      delimiter: options.delimiter ?? null,
      sizeBytes: Buffer.byteLength(content),
    }),
    options.steps ?? [],
    { companyId: 'c', fileId: 'f', fileVersionId: 'v', version: 1, extra: {} },
    {
      maxColumns: options.maxColumns ?? 1024,
      xlsxLimits: options.xlsxLimits ?? null,
      maxRows: options.maxRows ?? 1_000_000,
      workDir,
      other: options.oneConnection ? undefined : engine.connect(),
    },
  );
}

async function column(sql: string): Promise<unknown[]> {
  const reader = await engine!.conn.runAndReadAll(sql);
  return reader.getRowsJS().map((r) => r[0]);
}

describe('reports: the analysis engine', () => {
  after(async () => {
    engine?.close();
    await rm(workDir, { recursive: true, force: true });
  });

  // BOM, CRLF, a quoted delimiter, an embedded newline, a blank line, a duplicate row, null words
  const CSV =
    '\uFEFFid,amount,when,flag,name,mixed\r\n' +
    '1,10,2024-01-01,true,alice,1\r\n' +
    '2,-5.5,2024-01-03,false,bob,x\r\n' +
    '3,0,2024-02-01,TRUE,"car,ol",2.5\r\n' +
    '4,20,,yes,"multi\nline",2024-01-01\r\n' +
    '\r\n' +
    '5,10,2024-01-01,no,alice,NA\r\n' +
    '1,10,2024-01-01,true,alice,1\r\n';

  it('profiles a CSV statistic by statistic', async () => {
    const { profile, loaded } = await analyse(CSV, 'csv');
    expect(profile.sheets).to.have.length(1);
    const sheet = profile.sheets[0];
    expect(sheet).to.include({ rows: 7, columns: 6, duplicateRows: 1, blankRows: 1 });
    expect(sheet.warnings).to.deep.equal([]);
    const [id, amount, when, flag, name, mixed] = sheet.columnProfiles;
    expect(sheet.columnProfiles.map((c) => [c.name, c.position, c.inferredType])).to.deep.equal([
      ['id', 1, 'integer'],
      ['amount', 2, 'decimal'],
      ['when', 3, 'date'],
      ['flag', 4, 'boolean'],
      ['name', 5, 'text'],
      ['mixed', 6, 'text'],
    ]);

    expect(id).to.include({ count: 7, nulls: 1, distinct: 5 });
    expectNumeric(id, [1, 2, 3, 4, 5, 1]);
    expect(id.shares).to.deep.equal({ integer: 1, decimal: 0, boolean: 0, date: 0, datetime: 0, text: 0 });
    expect(id.topValues).to.deep.equal([
      { value: '1', count: 2 },
      { value: '2', count: 1 },
      { value: '3', count: 1 },
      { value: '4', count: 1 },
      { value: '5', count: 1 },
    ]);

    expect(amount).to.include({ nulls: 1, distinct: 4 });
    expectNumeric(amount, [10, -5.5, 0, 20, 10, 10]);
    expect(amount.shares.integer).to.be.closeTo(5 / 6, 1e-12);
    expect(amount.shares.decimal).to.be.closeTo(1 / 6, 1e-12);
    expect(amount.topValues[0]).to.deep.equal({ value: '10', count: 3 });

    expect(when).to.include({ nulls: 2, nonNull: 5, distinct: 3, min: '2024-01-01', max: '2024-02-01' });
    expect(when).to.include({ mean: null, stddev: null, quantiles: null, zeros: null, length: null });

    expect(flag).to.include({ nulls: 1, distinct: 5, min: false, max: true });
    expect(flag.shares.boolean).to.equal(1);

    expect(name).to.include({ nulls: 1, distinct: 4, min: 'alice', max: 'multi\nline' });
    expect(name.length).to.deep.equal({ min: 3, max: 10, mean: (5 + 3 + 6 + 10 + 5 + 5) / 6 });
    expect(name.topValues[0]).to.deep.equal({ value: 'alice', count: 3 });

    // a column of mixed types: its shares, and text as its type; NA counts as null
    expect(mixed).to.include({ nulls: 2, nonNull: 5, inferredType: 'text' });
    expect(mixed.shares).to.deep.equal({
      integer: 2 / 5,
      decimal: 1 / 5,
      boolean: 0,
      date: 1 / 5,
      datetime: 0,
      text: 1 / 5,
    });

    // row numbers are those a spreadsheet shows: the header is row 1, the blank line keeps row 6
    const s = loaded.sheets[0];
    expect(await column(`SELECT ${s.rowNumberColumn} FROM ${s.table} ORDER BY 1`)).to.deep.equal([
      2n,
      3n,
      4n,
      5n,
      6n,
      7n,
      8n,
    ]);
    // raw text is kept for later steps; typed values come from the inferred type
    const amountCol = s.columns[1].ident;
    expect(
      await column(`SELECT ${typedSql(amountCol, 'decimal')} FROM ${s.table} ORDER BY ${s.rowNumberColumn}`),
    ).to.deep.equal([10, -5.5, 0, 20, null, 10, 10]);
    expect(
      await column(`SELECT ${s.columns[4].ident} FROM ${s.table} WHERE ${s.rowNumberColumn} = 4`),
    ).to.deep.equal(['car,ol']);
  });

  it('TSV with bare CR line endings, quoted tabs, datetimes with offsets', async () => {
    const tsv =
      'k\tat\tv\r' +
      'a\t2024-01-02T10:00:00Z\t1.5\r' +
      '"b\tc"\t2024-01-02 12:00:00+02:00\t-1\r' +
      'c\t2024-01-03\t1e3\r';
    const { profile } = await analyse(tsv, 'tsv', { delimiter: '\t' });
    const sheet = profile.sheets[0];
    expect(sheet).to.include({ rows: 3, columns: 3, name: 'TSV' });
    const [k, at, v] = sheet.columnProfiles;
    expect(k.topValues.map((t) => t.value)).to.deep.equal(['a', 'b\tc', 'c']);
    expect(at.inferredType).to.equal('datetime');
    expect(at.shares).to.include({ datetime: 2 / 3, date: 1 / 3 });
    // +02:00 is applied: 12:00+02:00 is 10:00 UTC
    expect(at.min).to.equal('2024-01-02T10:00:00.000Z');
    expect(at.max).to.equal('2024-01-03T00:00:00.000Z');
    expect(v.inferredType).to.equal('decimal');
    expectNumeric(v, [1.5, -1, 1000]);
  });

  it('datetimes without seconds are datetimes with Z, an offset or spaces after them too', async () => {
    const csv =
      'at\n' +
      '2024-01-02T10:00Z\n' +
      '2024-01-02T12:00+02:00\n' +
      '2024-01-02 09:30-0100\n' +
      '2024-01-02 10:45 \n' +
      '2024-01-02T11:00:00Z\n';
    const { profile } = await analyse(csv, 'csv');
    const [at] = profile.sheets[0].columnProfiles;
    expect(at.shares).to.include({ datetime: 1, text: 0 });
    expect(at).to.include({
      inferredType: 'datetime',
      min: '2024-01-02T10:00:00.000Z',
      max: '2024-01-02T11:00:00.000Z',
    });
    // the typed value the rules and comparisons read: in UTC, the offset applied
    expect(
      await column(`SELECT (${typedSql('c1', 'datetime')})::VARCHAR FROM sheet_0 ORDER BY row_number`),
    ).to.deep.equal([
      '2024-01-02 10:00:00',
      '2024-01-02 10:00:00',
      '2024-01-02 10:30:00',
      '2024-01-02 10:45:00',
      '2024-01-02 11:00:00',
    ]);
  });

  it('a time past 23:59:59 or an offset beyond ±18:00 is text, not a datetime DuckDB would shift', async () => {
    // DuckDB's casts take 24:00:00 (the next day) and any two-digit offset (+25:00, +02:60)
    const csv =
      'ok,bad\n' +
      '2024-01-02T23:59:59,2024-01-02T24:00:00\n' +
      '2024-01-02 10:00+18:00,2024-01-02 10:00+25:00\n' +
      '2024-01-02 10:00-1759,2024-01-02 10:00:00+02:60\n' +
      '2024-01-02 10:00:00-18:00,2024-01-02 10:00:00+18:01\n';
    const { profile } = await analyse(csv, 'csv');
    const [ok, bad] = profile.sheets[0].columnProfiles;
    expect(ok).to.include({
      inferredType: 'datetime',
      min: '2024-01-01T16:00:00.000Z',
      max: '2024-01-03T04:00:00.000Z',
    });
    expect(ok.shares).to.include({ datetime: 1 });
    expect(bad.inferredType).to.equal('text');
    expect(bad.shares).to.include({ datetime: 0, text: 1 });
  });

  it('columns of few distinct values (summed from their grouped values) give the statistics of every row', async () => {
    // 400 rows; n, d, day, at and flag repeat few values (at most a quarter of the rows: the grouped path), id
    // is a key (the scan). Several texts of one number ('7', '007', '7 ') must count as that number
    let x = 17;
    const next = (m: number) => {
      x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
      return x % m;
    };
    const ns: number[] = [];
    const ds: number[] = [];
    const days: string[] = [];
    const ats: string[] = [];
    const lines = ['id,n,d,day,at,flag'];
    let flags = 0;
    for (let i = 0; i < 400; i++) {
      const n = next(31) - 10;
      const nText = n === 7 ? ['7', '007', '7 '][next(3)] : String(n);
      const nullN = next(20) === 0;
      if (!nullN) ns.push(n);
      const d = (next(40) - 15) / 4;
      ds.push(d);
      const day = `2024-0${1 + next(9)}-1${next(10)}`;
      days.push(day);
      // one offset: 12:00+02:00 is 10:00 UTC
      const at =
        next(2) === 0 ? `2023-12-0${1 + next(9)} 12:00:00+02:00` : `2023-12-0${1 + next(9)}T08:30:00`;
      ats.push(at);
      const flag = next(2) === 0;
      if (flag) flags++;
      lines.push(`${i},${nullN ? '' : nText},${d},${day},${at},${flag}`);
    }
    const { profile } = await analyse(lines.join('\n') + '\n', 'csv');
    const [id, n, d, day, at, flag] = profile.sheets[0].columnProfiles;
    expect([id, n, d, day, at, flag].map((c) => c.inferredType)).to.deep.equal([
      'integer',
      'integer',
      'decimal',
      'date',
      'datetime',
      'boolean',
    ]);
    expect(n.distinct * 4).to.be.at.most(400);
    expect(d.distinct * 4).to.be.at.most(400);
    expectNumeric(n, ns);
    expect(n.nulls).to.equal(400 - ns.length);
    expectNumeric(d, ds);
    expectNumeric(
      id,
      Array.from({ length: 400 }, (_, i) => i),
    );
    const sortedDays = [...days].sort();
    expect(day).to.include({ min: sortedDays[0], max: sortedDays[sortedDays.length - 1] });
    const utc = ats.map((a) =>
      a.endsWith('+02:00') ? Date.parse(a.replace(' ', 'T')) : Date.parse(`${a}Z`),
    );
    expect(at.min).to.equal(new Date(Math.min(...utc)).toISOString());
    expect(at.max).to.equal(new Date(Math.max(...utc)).toISOString());
    expect(flag).to.include({ min: flags < 400 ? false : true, max: flags > 0 });
  });

  it('the profile on one connection is the profile on two (the worker runs its queries on two at once)', async () => {
    const lines = ['id,n,d,day,flag,name'];
    for (let i = 0; i < 300; i++) {
      lines.push(`${i},${i % 7},${(i % 13) / 4},2024-01-${10 + (i % 9)},${i % 3 === 0},n${i % 11}`);
    }
    lines.push(lines[5], lines[6]); // two duplicate rows
    for (const content of [CSV, lines.join('\n') + '\n']) {
      const two = await analyse(content, 'csv');
      const one = await analyse(content, 'csv', { oneConnection: true });
      expect(two.profile).to.deep.equal(one.profile);
    }
  });

  it("interrupt() stops the queries running on the engine's first connection and on those opened after", async () => {
    const own = await openEngine({
      threads: 1,
      memoryLimitMb: 64,
      tempDirectory: path.join(workDir, 'stop'),
    });
    try {
      const second = await own.connect();
      const endless = 'SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3';
      const outcomes = [own.conn, second].map((c) =>
        c.run(endless).then(
          () => 'finished',
          (e: Error) => e.message,
        ),
      );
      await new Promise((r) => setTimeout(r, 200));
      own.interrupt();
      for (const outcome of await Promise.all(outcomes)) expect(outcome).to.match(/interrupt/i);
      // the connections stay usable
      expect((await second.runAndReadAll('SELECT 1 AS x')).getRowObjectsJS()).to.deep.equal([{ x: 1 }]);
    } finally {
      own.close();
    }
  });

  it('empty and header-only files; rows wider than the header; repeated and blank header names', async () => {
    const empty = await analyse('', 'csv');
    expect(empty.profile.sheets[0]).to.include({ rows: 0, columns: 0, duplicateRows: 0 });

    const headerOnly = await analyse('a,b\n', 'csv');
    const sheet = headerOnly.profile.sheets[0];
    expect(sheet).to.include({ rows: 0, columns: 2, duplicateRows: 0, blankRows: 0 });
    expect(sheet.columnProfiles[0]).to.include({
      name: 'a',
      inferredType: 'text',
      nulls: 0,
      nonNull: 0,
      distinct: 0,
      min: null,
    });
    expect(sheet.columnProfiles[0].topValues).to.deep.equal([]);

    const wide = await analyse('x,,x\n1,2,3\n4,5,6,7\n\n\n', 'csv');
    const w = wide.profile.sheets[0];
    // trailing blank lines are not rows; the 4th cell is kept in a generated column
    expect(w).to.include({ rows: 2, columns: 4 });
    expect(w.columnProfiles.map((c) => c.name)).to.deep.equal(['x', 'column 2', 'x (2)', 'column 4']);
    expect(w.columnProfiles[3]).to.include({ nulls: 1, nonNull: 1, min: 7 });
    expect(w.warnings.map((x) => [x.code, x.count])).to.deep.equal([
      ['blank_header_cells', 2],
      ['repeated_header_names', 1],
      ['rows_wider_than_header', 1],
    ]);
  });

  it('a plain file (read by DuckDB as it is) gives the same profile as through the normalising pass', async () => {
    // LF or CRLF, no blank line, no BOM: the fast path; a BOM in front sends the same rows through the pass
    const contents = [
      'id,amount,name\n1,2.5,a\n2,,b\n3,-1,a\n1,2.5,a\n',
      'id,amount,name\r\n1,2.5,a\r\n2,,b\r\n3,-1,a',
      // a row wider than the header: its cell is kept in a generated column (never dropped)
      'id,amount,name\n1,2.5,a\n2,3,b,extra\n4\n',
      // a quoted line break, a quoted delimiter
      'id,amount,name\n1,2.5,"a\nb"\n2,3,"c,d"\n',
      // short rows padded with nulls
      'id,amount,name\n1\n2,3\n',
      // empty cells beyond the header (trailing delimiters, an empty quoted cell): no cell to keep
      'id,amount,name\n1,2.5,a,\n2,,b,,""\n3,-1,a\n',
    ];
    for (const content of contents) {
      const fast = await analyse(content, 'csv');
      const fastRows = await column(
        `SELECT ${fast.loaded.sheets[0].rowNumberColumn} FROM ${fast.loaded.sheets[0].table} ORDER BY 1`,
      );
      const slow = await analyse(`\uFEFF${content}`, 'csv');
      const slowRows = await column(
        `SELECT ${slow.loaded.sheets[0].rowNumberColumn} FROM ${slow.loaded.sheets[0].table} ORDER BY 1`,
      );
      expect(fast.profile, JSON.stringify(content)).to.deep.equal(slow.profile);
      expect(fastRows).to.deep.equal(slowRows);
    }
    // null words in a numeric column (nan casts to NaN in DuckDB: it must count as null, not as a number)
    const nan = (await analyse('id,amount\n1,2.5\n2,nan\n3, NaN \n4,NA\n5,-1\n', 'csv')).profile.sheets[0];
    expect(nan.columnProfiles[1]).to.include({
      inferredType: 'decimal',
      nulls: 3,
      min: -1,
      max: 2.5,
      mean: 0.75,
    });
    const wide = await analyse(contents[2], 'csv');
    expect(wide.profile.sheets[0].columns).to.equal(4);
    expect(wide.profile.sheets[0].columnProfiles[3]).to.include({ nonNull: 1, min: 'extra' });
    let failure: unknown;
    try {
      await analyse('a,b\n1,"open\n2,3\n', 'csv');
    } catch (err) {
      failure = err;
    }
    expect((failure as AnalysisFailure).reason).to.equal('unparsable_file');
  });

  it('a semicolon-delimited CSV reads decimal commas as numbers and day-first dates as dates; a comma-delimited one thousands grouped by commas; a tab-delimited one as its cells show', async () => {
    // the fast path (read as it is) and the normalising pass (a BOM, a quoted line break) read the same
    const body =
      'id;amount;price;label;note\n' +
      '1;1,5;1.234,50;a,b;"x\ny"\n' +
      '2;-0,25; 2,0 ;1,5 kg;1,2,3\n' +
      '3;10;1.234;1.5;,5\n' +
      '4;NA;12.345.678,9;7,25;1,\n';
    for (const content of [body, `\uFEFF${body}`, body.replace('"x\ny"', 'xy')]) {
      const { profile, loaded } = await analyse(content, 'csv', { delimiter: ';' });
      const [, amount, price, label, note] = profile.sheets[0].columnProfiles;
      expect(amount.inferredType, JSON.stringify(content)).to.equal('decimal');
      expectNumeric(amount, [1.5, -0.25, 10]);
      expect(amount.shares).to.include({ integer: 1 / 3, decimal: 2 / 3 });
      expect(price.inferredType).to.equal('decimal');
      // `1.234` without a comma part stays 1.234; spaces around a cell are kept (only the marks change)
      expectNumeric(price, [1234.5, 2, 1.234, 12345678.9]);
      expect(price.topValues.map((t) => t.value).sort()).to.deep.equal([
        ' 2.0 ',
        '1.234',
        '1234.50',
        '12345678.9',
      ]);
      // a cell that is no number with a decimal comma is left as it is
      expect(label.inferredType).to.equal('text');
      expect(label.topValues.map((t) => t.value).sort()).to.deep.equal(['1,5 kg', '1.5', '7.25', 'a,b']);
      expect(note.inferredType).to.equal('text');
      expect(note.topValues.map((t) => t.value)).to.include.members([',5', '1,', '1,2,3']);
      const s = loaded.sheets[0];
      expect(
        await column(
          `SELECT ${typedSql(s.columns[1].ident, 'decimal')} FROM ${s.table} ORDER BY ${s.rowNumberColumn}`,
        ),
      ).to.deep.equal([1.5, -0.25, 10, null]);
    }
    // day-first dates and datetimes (a point or a slash, one or two digits) read as ISO dates; a day that does
    // not exist, mixed separators or a two-digit year stay as written
    const dates = (
      await analyse(
        'id;day;at;other\n' +
          '1;15.03.2024;15.03.2024 14:30;31.02.2024\n' +
          '2;5/3/2024; 1.12.1999 9:05:07 ;15.03/2024\n' +
          '3; 01.01.2000 ;01/01/2000;15.03.24\n' +
          '4;;2.1.2024 23:59:59.5;15.03.2024 24:00\n',
        'csv',
        { delimiter: ';' },
      )
    ).profile.sheets[0];
    const [, day, at, other] = dates.columnProfiles;
    expect(day).to.include({ inferredType: 'date', min: '2000-01-01', max: '2024-03-15', nulls: 1 });
    expect(day.topValues.map((t) => t.value).sort()).to.deep.equal([
      '2000-01-01',
      '2024-03-05',
      '2024-03-15',
    ]);
    expect(at).to.include({
      inferredType: 'datetime',
      min: '1999-12-01T09:05:07.000Z',
      max: '2024-03-15T14:30:00.000Z',
    });
    expect(at.shares).to.include({ date: 1 / 4, datetime: 3 / 4 });
    expect(at.topValues.map((t) => t.value)).to.include.members(['2024-01-02 23:59:59.5', '2000-01-01']);
    expect(other.inferredType).to.equal('text');
    expect(other.topValues.map((t) => t.value).sort()).to.deep.equal([
      '15.03.2024 24:00',
      '15.03.24',
      '15.03/2024',
      '31.02.2024',
    ]);
    // a comma-delimited file reads a quoted number whose thousands are grouped by commas as that number; a
    // quoted "1,5" or "1,23" is text there (no group of three), as in a tab-delimited file
    const grouped = (
      await analyse('id,amount,label\n1,"1,234.5","a,b"\n2," -12,345 ",x\n3,7,"1,23"\n4,"1,000",1,5\n', 'csv')
    ).profile.sheets[0];
    expect(grouped.columnProfiles[1].inferredType).to.equal('decimal');
    expectNumeric(grouped.columnProfiles[1], [1234.5, -12345, 7, 1000]);
    expect(grouped.columnProfiles[1].topValues.map((t) => t.value)).to.include.members([
      '1234.5',
      ' -12345 ',
    ]);
    expect(grouped.columnProfiles[2]).to.include({ inferredType: 'text' });
    expect(grouped.columnProfiles[2].topValues.map((t) => t.value).sort()).to.deep.equal([
      '1',
      '1,23',
      'a,b',
      'x',
    ]);
    // a comma-delimited file keeps a quoted "1,5" as its text (a comma may group thousands there), a tab too
    const comma = (await analyse('id,amount\n1,"1,5"\n2,"2,5"\n', 'csv')).profile.sheets[0];
    expect(comma.columnProfiles[1]).to.include({ inferredType: 'text', min: '1,5' });
    // a tab-delimited file is judged on its cells: European when some cell can only be written so (1,5 or
    // 15.03.2024) and none only the other way (1,234.5 or 03/15/2024), grouped the other way round, else as written
    const tsv = async (text: string) =>
      (await analyse(text, 'tsv', { delimiter: '\t' })).profile.sheets[0].columnProfiles;
    const european = await tsv('id\tamount\tday\n1\t1,5\t15.03.2024\n2\t1.234,5\t5/3/2024\n3\t1,234\t\n');
    expect(european[1]).to.include({ inferredType: 'decimal', min: 1.234, max: 1234.5 });
    expect(european[2]).to.include({ inferredType: 'date', min: '2024-03-05', max: '2024-03-15' });
    const us = await tsv('id\tamount\tday\n1\t1,234.5\t03/15/2024\n2\t1,234\t2024-03-16\n3\t7\t\n');
    expect(us[1]).to.include({ inferredType: 'decimal', min: 7, max: 1234.5 });
    // a month-first date among them: the file's dates are month-first
    expect(us[2]).to.include({ inferredType: 'date', min: '2024-03-15', max: '2024-03-16' });
    const both = await tsv('id\tamount\n1\t1,5\n2\t1,234.5\n');
    expect(both[1]).to.include({ inferredType: 'text', min: '1,234.5' });
    const neither = await tsv('id\tamount\n1\t1,234\n2\t7\n');
    expect(neither[1]).to.include({ inferredType: 'text', min: '1,234' });
  });

  it('a number with a currency sign is that number, with a percent sign a hundredth of it, in the decimal mark of the file', async () => {
    const profiles = async (text: string, delimiter = ',') =>
      (await analyse(text, delimiter === ',' ? 'csv' : 'tsv', { delimiter })).profile.sheets[0]
        .columnProfiles;
    // Excel's CSV of currency-, percent- and accounting-formatted cells in the United States
    const us = await profiles(
      'id,price,rate,note\n' +
        '1,"$1,234.50",12%,Price in $\n' +
        '2,-$5,12.5 %,$ x\n' +
        '3,$ -0.25,-3%,USD 5\n' +
        '4,7,100%,(1)\n' +
        '5,,0.5,5%%\n' +
        '6,"($1,234.50)",(5%),(a)\n' +
        '7,"(1,000.25)",(0.5),$$5\n',
    );
    const [, price, rate, note] = us;
    expect(price).to.include({ inferredType: 'decimal', min: -1234.5, max: 1234.5, nulls: 1 });
    expectNumeric(price, [1234.5, -5, -0.25, 7, -1234.5, -1000.25]);
    expect(price.topValues.map((t) => t.value).sort()).to.deep.equal([
      '-0.25',
      '-1000.25',
      '-1234.50',
      '-5',
      '1234.50',
      '7',
    ]);
    expect(rate).to.include({ inferredType: 'decimal' });
    expectNumeric(rate, [0.12, 0.125, -0.03, 1, 0.5, -0.05, -0.5]);
    // what is no number with one sign, or a list's item in parentheses, stays as written
    expect(note).to.include({ inferredType: 'text' });
    expect(note.topValues.map((t) => t.value).sort()).to.deep.equal([
      '$ x',
      '$$5',
      '(1)',
      '(a)',
      '5%%',
      'Price in $',
      'USD 5',
    ]);
    // a semicolon-delimited file: decimal commas, the euro sign after the number
    // thousands grouped by no-break spaces (a no-break space, a narrow no-break space: French, Nordic and Central
    // European spreadsheet programs), also with a sign or a currency sign; plain spaces (typed: a phone number's
    // groups) stay as written
    const eu = await profiles(
      'id;betrag;anteil;menge;telefon\n' +
        '1;1.234,50 €;12,5 %;1\u00a0234\u00a0567,5;612 345 678\n' +
        '2;-7 €;3 %;1\u00a0234;+33 612 345 678\n' +
        '3;€ 0,99;100 %; -12\u202f345 ;1 234,5\n' +
        '4;1\u202f234,50 €;0 %;2,5;06\u00a0123\u00a0456\n',
      ';',
    );
    expectNumeric(eu[1], [1234.5, -7, 0.99, 1234.5]);
    expectNumeric(eu[2], [0.125, 0.03, 1, 0]);
    expect(eu[3]).to.include({ inferredType: 'decimal' });
    expectNumeric(eu[3], [1234567.5, 1234, -12345, 2.5]);
    expect(eu[3].topValues.map((t) => t.value)).to.include(' -12345 ');
    expect(eu[4]).to.include({ inferredType: 'text' });
    expect(eu[4].topValues.map((t) => t.value)).to.include.members([
      '612 345 678',
      '+33 612 345 678',
      '1 234,5',
      '06\u00a0123\u00a0456',
    ]);
    // a file without a sign next to a digit is read as written, at no cost
    const none = await profiles('id,note\n1,$\n2,100 percent\n');
    expect(none[1]).to.include({ inferredType: 'text' });
  });

  it("a spreadsheet's error value in a CSV cell is null and counted, as an XLSX error cell is; #N/A and its translations are null words", async () => {
    // the fast path, the normalising pass (a byte order mark) and a quoted line break read the same
    const body =
      'id,ratio,note,code\n' +
      '1,0.5,#DIV/0!x,#123\n' +
      '2,#DIV/0!,"a\nb",#REF!\n' +
      '3,1.5,#VALUE!,#NV\n' +
      '4,#N/A,x,"#NAME?"\n';
    for (const content of [body, `\uFEFF${body}`, body.replace('"a\nb"', 'ab')]) {
      const { profile, loaded } = await analyse(content, 'csv', { delimiter: ',' });
      const sheet = profile.sheets[0];
      const [, ratio, note, code] = sheet.columnProfiles;
      expect(ratio, JSON.stringify(content)).to.include({
        inferredType: 'decimal',
        nulls: 2,
        min: 0.5,
        max: 1.5,
      });
      // a cell holding more than an error value is text
      expect(note.topValues.map((t) => t.value)).to.include('#DIV/0!x');
      expect(note).to.include({ nulls: 1 });
      expect(code).to.include({ nulls: 3 });
      expect(code.topValues.map((t) => t.value)).to.deep.equal(
        [{ value: '#123', count: 1 }].map((t) => t.value),
      );
      // #DIV/0!, #VALUE!, #REF!, #NAME? — #N/A and #NV are null words, not counted
      expect(sheet.warnings.find((w) => w.code === 'unreadable_cells')).to.include({ count: 4 });
      expect(loaded.sheets[0].rowCount).to.equal(4);
    }
    // German error values in a semicolon-delimited file; a file without one has no such warning
    const de = (await analyse('id;wert\n1;#WERT!\n2;#BEZUG!\n3;1,5\n', 'csv', { delimiter: ';' })).profile
      .sheets[0];
    expect(de.columnProfiles[1]).to.include({ inferredType: 'decimal', nulls: 2 });
    expect(de.warnings.find((w) => w.code === 'unreadable_cells')).to.include({ count: 2 });
    const none = (await analyse('id,code\n1,#123\n2,#DIV\n', 'csv', { delimiter: ',' })).profile.sheets[0];
    expect(none.warnings.map((w) => w.code)).to.not.include('unreadable_cells');
    expect(none.columnProfiles[1]).to.include({ inferredType: 'text', nulls: 0 });
  });

  it('dates with slashes in a comma- or tab-delimited file read in the order its dates show: month-first (United States), day-first (United Kingdom), else as written', async () => {
    const profiles = async (text: string, delimiter = ',') =>
      (await analyse(text, delimiter === ',' ? 'csv' : 'tsv', { delimiter })).profile.sheets[0]
        .columnProfiles;
    // Excel's CSV in the United States: M/D/YYYY, with a time H:MM (24 hours, or with AM/PM); one date past the
    // 12th of a month tells the order for the whole file — here in the last row, past the file's first chunk
    const rows = Array.from({ length: 3000 }, (_, i) => `${i + 5},1/1/2024,1/1/2024 0:00,n`);
    const us = await profiles(
      'id,day,at,note\n' +
        '1,3/5/2024,3/5/2024 2:30 PM,a/b\n' +
        '2, 12/1/2024 ,12/1/2024 12:05 am,1/2\n' +
        '3,2/30/2024,3/5/2024 14:30:05.5,3/15/24\n' +
        '4,,1/2/2024 13:00 PM,\n' +
        rows.join('\n') +
        '\n3005,3/15/2024,3/15/2024 23:59,x\n',
    );
    const [, day, at, note] = us;
    // 2/30/2024 is no day: text, as written
    expect(day).to.include({ inferredType: 'text', nulls: 1 });
    expect(day.shares).to.deep.include({ date: 3003 / 3004, text: 1 / 3004 });
    expect(day.topValues.map((t) => t.value)).to.include.members([
      '2024-01-01',
      '2024-03-05',
      '2024-12-01',
      '2024-03-15',
    ]);
    // 2:30 PM is 14:30, 12:05 am 00:05; 13:00 PM is no time
    expect(at.topValues.map((t) => t.value)).to.include.members([
      '2024-03-05 14:30:00',
      '2024-12-01 00:05:00',
      '2024-03-05 14:30:05.5',
      '1/2/2024 13:00 PM',
    ]);
    expect(at.shares).to.deep.include({ text: 1 / 3005 });
    // what is no four-digit-year date stays as written
    expect(note.topValues.map((t) => t.value)).to.include.members(['a/b', '1/2', '3/15/24']);
    // the United Kingdom's: D/M/YYYY
    const uk = await profiles('id,day\n1,15/3/2024\n2,1/2/2024\n3,31/12/1999 23:00\n');
    expect(uk[1]).to.include({
      inferredType: 'datetime',
      min: '1999-12-31T23:00:00.000Z',
      max: '2024-03-15T00:00:00.000Z',
    });
    expect(uk[1].topValues.map((t) => t.value)).to.include('2024-02-01');
    // no date that tells (every day up to the 12th), or dates of both orders: as written
    const neither = await profiles('id,day\n1,1/2/2024\n2,3/4/2024\n');
    expect(neither[1]).to.include({ inferredType: 'text', min: '1/2/2024' });
    const both = await profiles('id,day\n1,15/3/2024\n2,3/15/2024\n3,1/2/2024\n');
    expect(both[1]).to.include({ inferredType: 'text', min: '1/2/2024' });
    // dates written year first (as Excel writes them in Japan, China, Taiwan), with any delimiter
    const ymd = await profiles(
      'id,day,at\n1,2024/3/15,2024/3/15 9:05\n2,2024/12/1,2024/12/1 14:30:05\n3,2024/2/30,\n',
    );
    expect(ymd[1]).to.include({ inferredType: 'text' });
    expect(ymd[1].shares).to.deep.include({ date: 2 / 3, text: 1 / 3 });
    expect(ymd[1].topValues.map((t) => t.value).sort()).to.deep.equal([
      '2024-03-15',
      '2024-12-01',
      '2024/2/30',
    ]);
    expect(ymd[2]).to.include({ inferredType: 'datetime', min: '2024-03-15T09:05:00.000Z' });
    const ymdSemicolon = await profiles('id;day\n1;2024/3/15\n2;15.03.2024\n', ';');
    expect(ymdSemicolon[1]).to.include({ inferredType: 'date', min: '2024-03-15', max: '2024-03-15' });
    // a tab-delimited file likewise; a semicolon-delimited one reads day-first as before
    const tab = await profiles('id\tday\n1\t3/15/2024\n2\t1/2/2024\n', '\t');
    expect(tab[1]).to.include({ inferredType: 'date', min: '2024-01-02', max: '2024-03-15' });
    const semicolon = await profiles('id;day\n1;3/12/2024\n2;1/2/2024\n', ';');
    expect(semicolon[1]).to.include({ inferredType: 'date', min: '2024-02-01', max: '2024-12-03' });
  });

  it('a file that cannot be read or is over a limit fails with a reason code', async () => {
    let failure: unknown;
    try {
      await analyse('a,b\n1,"open\n', 'csv');
    } catch (err) {
      failure = err;
    }
    expect(failure).to.be.instanceOf(AnalysisFailure);
    expect((failure as AnalysisFailure).reason).to.equal('unparsable_file');
    try {
      await analyse('a,b\n1,2,3,4\n', 'csv', { maxColumns: 3 });
      failure = undefined;
    } catch (err) {
      failure = err;
    }
    expect((failure as AnalysisFailure).reason).to.equal('too_many_columns');
    // the engine's temporary copies are gone
    expect((await readdir(workDir)).filter((f) => f.startsWith('load-'))).to.deep.equal([]);
  });

  it("an XLSX whose download fails midway fails with the download's error (retried), not as unreadable", async () => {
    const workbook = new ExcelJS.Workbook();
    workbook.addWorksheet('Data').addRow(['a', 'b']);
    const buffer = Buffer.from(await workbook.xlsx.writeBuffer());
    await mkdir(workDir, { recursive: true });
    engine?.close();
    engine = await openEngine({ threads: 1, memoryLimitMb: 128, tempDirectory: path.join(workDir, 'duck') });
    const lost = new Error('connection reset by the storage');
    const source = {
      format: 'xlsx' as const,
      delimiter: null,
      sizeBytes: buffer.length,
      // half the object, then the connection breaks
      open: async () =>
        new Readable({
          read() {
            this.push(buffer.subarray(0, buffer.length >> 1));
            this.destroy(lost);
          },
        }),
    };
    let failure: unknown;
    try {
      await loadVersion(engine.conn, source, { maxColumns: 10, xlsxLimits: null, maxRows: 10, workDir });
    } catch (err) {
      failure = err;
    }
    expect(failure).to.equal(lost);
    expect((await readdir(workDir)).filter((f) => f.startsWith('load-'))).to.deep.equal([]);
  });

  it('profiles every worksheet of an XLSX: dates as dates, cached formula results, blank rows kept', async () => {
    const workbook = new ExcelJS.Workbook();
    const first = workbook.addWorksheet('Numbers');
    first.addRow(['n', 'd', 'label']);
    first.addRow([1, new Date(Date.UTC(2024, 0, 2)), 'a']);
    first.addRow([2.5, new Date(Date.UTC(2024, 0, 2, 10, 30)), { formula: 'A2*2', result: 2 }]);
    // row 4 left blank
    first.getRow(5).values = [-1, null, { richText: [{ text: 'ri' }, { text: 'ch' }] }];
    first.getRow(6).values = [{ error: '#DIV/0!' }, null, 'a'];
    const second = workbook.addWorksheet('Other');
    second.addRow(['k', null, 'k']);
    second.addRow(['x', true, 'y']);
    const buffer = Buffer.from(await workbook.xlsx.writeBuffer());

    const { profile, loaded } = await analyse(buffer, 'xlsx');
    expect(profile.sheets.map((s) => [s.name, s.rows, s.columns])).to.deep.equal([
      ['Numbers', 5, 3],
      ['Other', 1, 3],
    ]);
    const numbers = profile.sheets[0];
    expect(numbers.blankRows).to.equal(1);
    expect(numbers.warnings.map((w) => [w.code, w.count])).to.deep.equal([['unreadable_cells', 1]]);
    const [n, d, label] = numbers.columnProfiles;
    expect(n.inferredType).to.equal('decimal');
    expectNumeric(n, [1, 2.5, -1]);
    expect(d).to.include({ inferredType: 'datetime', nulls: 3, min: '2024-01-02T00:00:00.000Z' });
    expect(d.max).to.equal('2024-01-02T10:30:00.000Z');
    expect(d.shares).to.include({ date: 0.5, datetime: 0.5 });
    expect(label.topValues).to.deep.equal([
      { value: 'a', count: 2 },
      { value: '2', count: 1 },
      { value: 'rich', count: 1 },
    ]);
    expect(await column(`SELECT row_number FROM ${loaded.sheets[0].table} ORDER BY 1`)).to.deep.equal([
      2n,
      3n,
      4n,
      5n,
      6n,
    ]);

    const other = profile.sheets[1];
    expect(other.columnProfiles.map((c) => [c.name, c.inferredType])).to.deep.equal([
      ['k', 'text'],
      ['column 2', 'boolean'],
      ['k (2)', 'text'],
    ]);
  });

  it('an XLSX sheet loads cell by cell as written: nulls, blank rows, wider rows, any character', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Cells');
    sheet.addRow(['a', 'b']);
    sheet.addRow(['x', null]);
    sheet.addRow([null, 'y']);
    // row 4 blank; row 5 wider than the header; rows 6 and 7 get the characters rows are staged with (an
    // XML 1.1 part may hold them as character references)
    sheet.getRow(5).values = ['p', null, 'q', 'r'];
    sheet.getRow(6).values = ['MARK1', null, 'MARK2'];
    sheet.getRow(7).values = ['w', 'MARK3'];
    sheet.getRow(8).values = ['last'];
    const written = await unzip(Buffer.from(await workbook.xlsx.writeBuffer()));
    const buffer = zip(
      written.map(({ name, data }) => {
        const text = data.toString('utf8');
        if (!text.includes('MARK1')) return { name, data };
        return {
          name,
          data: text
            .replace('<?xml version="1.0"', '<?xml version="1.1"')
            .replace('MARK1', 'u&#x1f;v')
            .replace('MARK2', '&#x1e;')
            .replace('MARK3', 'z&#x1e;'),
        };
      }),
    );
    const { profile, loaded } = await analyse(buffer, 'xlsx');
    expect(profile.sheets[0]).to.include({ rows: 7, columns: 4, blankRows: 1 });
    const reader = await engine!.conn.runAndReadAll(
      `SELECT row_number, c1, c2, c3, c4 FROM ${loaded.sheets[0].table} ORDER BY row_number`,
    );
    expect(reader.getRowsJS()).to.deep.equal([
      [2n, 'x', null, null, null],
      [3n, null, 'y', null, null],
      [4n, null, null, null, null],
      [5n, 'p', null, 'q', 'r'],
      [6n, 'u\u001fv', null, '\u001e', null],
      [7n, 'w', 'z\u001e', null, null],
      [8n, 'last', null, null, null],
    ]);
    // the table is the sheet's only table left (the staged rows are dropped)
    const tables = await engine!.conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() ORDER BY 1`);
    expect(tables.getRowsJS()).to.deep.equal([[loaded.sheets[0].table]]);
  });

  it("an XLSX's non-ASCII text loads whole where a part's chunks split its bytes (shared and inline strings)", async () => {
    // 20,000 rows of three-byte characters: the unpacked parts come in many chunks, and some split a character
    const rows = 20_000;
    const strings = Array.from({ length: rows }, (_, i) => `<si><t>東京${i}</t></si>`).join('');
    const sheetRows = Array.from(
      { length: rows },
      (_, i) =>
        `<row r="${i + 1}"><c r="A${i + 1}" t="s"><v>${i}</v></c>` +
        `<c r="B${i + 1}" t="inlineStr"><is><t>大阪${i}</t></is></c></row>`,
    ).join('');
    const buffer = workbookOf('Cities', sheetRows, strings);
    const { loaded } = await analyse(buffer, 'xlsx');
    const table = loaded.sheets[0].table;
    // row n holds 東京(n-1) and 大阪(n-1); the header is row 1
    expect(
      await column(
        `SELECT count(*) FILTER (WHERE c1 = '東京' || (row_number - 1) AND c2 = '大阪' || (row_number - 1)) FROM ${table}`,
      ),
    ).to.deep.equal([BigInt(rows - 1)]);
  });

  it('an inline rich-text string of an XLSX loads as all its runs, without phonetic text', async () => {
    const inline = (ref: string, content: string) => `<c r="${ref}" t="inlineStr"><is>${content}</is></c>`;
    // 5,000 rows, so that some strings are split between the part's chunks
    const rows = 5_000;
    const sheetRows = Array.from({ length: rows }, (_, i) => {
      const r = i + 2;
      return (
        `<row r="${r}">` +
        inline(`A${r}`, `<r><t xml:space="preserve">Hello ${i} </t></r><r><rPr><b/></rPr><t>world</t></r>`) +
        inline(`B${r}`, '<t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh><phoneticPr fontId="1"/>') +
        inline(`C${r}`, '<t>plain</t>') +
        `</row>`
      );
    }).join('');
    const buffer = workbookOf(
      'Notes',
      `<row r="1">${inline('A1', '<r><t>greet</t></r><r><t>ing</t></r>')}${inline('B1', '<t>city</t>')}` +
        `${inline('C1', '<t>note</t>')}</row>${sheetRows}`,
    );
    const { profile, loaded } = await analyse(buffer, 'xlsx');
    expect(profile.sheets[0].columnProfiles.map((c) => c.name)).to.deep.equal(['greeting', 'city', 'note']);
    const table = loaded.sheets[0].table;
    expect(
      await column(`SELECT c1 || '|' || c2 || '|' || c3 FROM ${table} WHERE row_number IN (2, ${rows + 1})`),
    ).to.deep.equal(['Hello 0 world|東京|plain', `Hello ${rows - 1} world|東京|plain`]);
    expect(
      await column(
        `SELECT count(*) FILTER (WHERE c1 = 'Hello ' || (row_number - 2) || ' world' AND c2 = '東京' AND c3 = 'plain') FROM ${table}`,
      ),
    ).to.deep.equal([BigInt(rows)]);
  });

  it("an XLSX's sheets come in the workbook's order with its names, whatever the order of their parts", async () => {
    // the workbook lists Summary (sheet3.xml), Data (sheet1.xml, its relationship's target absolute, as
    // EPPlus writes it), Notes (notes.xml: a part not called sheet<N>.xml); an unlisted part comes last, named
    // by its place. ExcelJS's own driver emitted them in zip order, named Data "Sheet1", skipped notes.xml, and
    // without a shared strings part lost the last entry of the zip (Summary)
    const ns = `${SPREADSHEET_NS} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`;
    const type = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet';
    const part = (v: number) =>
      `<worksheet ${ns}><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>h</t></is></c></row>` +
      `<row r="2"><c r="A2"><v>${v}</v></c></row></sheetData></worksheet>`;
    const rel = (id: number, target: string) =>
      `<Relationship Id="rId${id}" Type="${type}" Target="${target}"/>`;
    const buffer = zip([
      { name: '[Content_Types].xml', data: '<Types/>' },
      {
        name: 'xl/workbook.xml',
        data:
          `<workbook ${ns}><sheets><sheet name="Summary" sheetId="3" r:id="rId3"/>` +
          '<sheet name="Data" sheetId="1" r:id="rId1"/><sheet name="Notes" sheetId="2" r:id="rId2"/></sheets></workbook>',
      },
      {
        name: 'xl/_rels/workbook.xml.rels',
        data:
          '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
          `${rel(1, '/xl/worksheets/sheet1.xml')}${rel(2, 'worksheets/notes.xml')}${rel(3, './worksheets/sheet3.xml')}` +
          '</Relationships>',
      },
      { name: 'xl/worksheets/sheet1.xml', data: part(1) },
      { name: 'xl/worksheets/notes.xml', data: part(2) },
      { name: 'xl/worksheets/sheet4.xml', data: part(4) },
      { name: 'xl/worksheets/sheet3.xml', data: part(3) },
    ]);
    // an unlisted part's name by its place is never a listed sheet's name (in any case)
    const listed = (names: string[]) =>
      zip([
        { name: '[Content_Types].xml', data: '<Types/>' },
        {
          name: 'xl/workbook.xml',
          data:
            `<workbook ${ns}><sheets>` +
            names.map((n, k) => `<sheet name="${n}" sheetId="${k + 1}" r:id="rId${k + 1}"/>`).join('') +
            '</sheets></workbook>',
        },
        {
          name: 'xl/_rels/workbook.xml.rels',
          data:
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
            names.map((_, k) => rel(k + 1, `worksheets/sheet${k + 1}.xml`)).join('') +
            '</Relationships>',
        },
        ...names.map((_, k) => ({ name: `xl/worksheets/sheet${k + 1}.xml`, data: part(k + 1) })),
        { name: 'xl/worksheets/sheet9.xml', data: part(9) },
      ]);
    const clash = await analyse(listed(['a', 'sheet3']), 'xlsx');
    expect(clash.loaded.sheets.map((s) => s.name)).to.deep.equal(['a', 'sheet3', 'Sheet3 (2)']);
    const twice = await analyse(listed(['Sheet3 (2)', 'SHEET3']), 'xlsx');
    expect(twice.loaded.sheets.map((s) => s.name)).to.deep.equal(['Sheet3 (2)', 'SHEET3', 'Sheet3 (3)']);
    const { profile, loaded } = await analyse(buffer, 'xlsx');
    expect(profile.sheets.map((s) => [s.index, s.name, s.columnProfiles[0].min])).to.deep.equal([
      [0, 'Summary', 3],
      [1, 'Data', 1],
      [2, 'Notes', 2],
      [3, 'Sheet4', 4],
    ]);
    expect(loaded.sheets.map((s) => [s.index, s.name])).to.deep.equal([
      [0, 'Summary'],
      [1, 'Data'],
      [2, 'Notes'],
      [3, 'Sheet4'],
    ]);
  });

  it('a number cell whose text JavaScript would write the same is taken as it is; any other is converted', () => {
    const taken = ['0', '1', '-1', '10', '1.5', '-0.5', '0.000001', '123456789012345', '12345678901234.5'];
    const converted = [
      '-0',
      '007',
      '1.50',
      '1.',
      '.5',
      '-.5',
      '1e5',
      '0.0000001',
      '1234567890123456',
      '',
      '-',
    ];
    for (const v of taken) expect([v, plainDecimal(v)]).to.deep.equal([v, true]);
    for (const v of converted) expect([v, plainDecimal(v)]).to.deep.equal([v, false]);
    // whenever a text is taken, it is the text of its number: random decimals of every size and precision
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    let taken_ = 0;
    for (let i = 0; i < 50_000; i++) {
      const x = (random() - 0.5) * 10 ** Math.floor(random() * 30 - 12);
      const digits = Math.floor(random() * 19);
      const v = random() < 0.5 ? x.toFixed(Math.min(digits, 20)) : x.toPrecision(Math.max(1, digits));
      if (!plainDecimal(v)) continue;
      taken_++;
      expect(String(Number(v)), v).to.equal(v);
    }
    expect(taken_).to.be.greaterThan(5_000);
  });

  it('random workbooks written by ExcelJS load cell by cell as written (shared and inline strings, numbers, booleans, dates, formulas, nulls)', async () => {
    // the expected text of each written value is worked out here, not by the loader's code: a number as
    // JavaScript writes it, a date as YYYY-MM-DD[ HH:MM:SS[.fff]] (UTC), a boolean as true/false, a formula as
    // its result, an empty text as null
    let seed = 20261127;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
    const texts = [
      'a',
      'Zürich',
      '東京',
      ' padded ',
      'x & y < z',
      '"quoted"',
      "it's",
      '',
      '1.50',
      'true',
      '2024-01-02',
    ];
    const dateOf = (d: Date) => {
      const iso = d.toISOString();
      const time = iso.slice(11, 23);
      if (time === '00:00:00.000') return iso.slice(0, 10);
      return `${iso.slice(0, 10)} ${time.endsWith('.000') ? time.slice(0, 8) : time}`;
    };
    type Written = { value: ExcelJS.CellValue; text: string | null };
    const value = (): Written => {
      switch (Math.floor(random() * 9)) {
        case 0:
          return { value: null, text: null };
        case 1: {
          const n = Math.floor(random() * 2_000_001) - 1_000_000;
          return { value: n, text: String(n) };
        }
        case 2: {
          const n =
            Math.round((random() - 0.5) * 10 ** Math.floor(random() * 12)) / 10 ** Math.floor(random() * 6);
          return { value: n, text: String(n) };
        }
        case 3: {
          const t = pick(texts);
          return { value: t, text: t === '' ? null : t };
        }
        case 4: {
          const b = random() < 0.5;
          return { value: b, text: String(b) };
        }
        case 5: {
          const d = new Date(Date.UTC(1990, 0, 1) + Math.floor(random() * 40 * 365) * 86_400_000);
          return { value: d, text: dateOf(d) };
        }
        case 6: {
          const d = new Date(Date.UTC(2000, 0, 1) + Math.floor(random() * 10 * 365 * 86_400) * 1000);
          return { value: d, text: dateOf(d) };
        }
        case 7: {
          const n = Math.floor(random() * 1000);
          return { value: { formula: 'ROW()*2', result: n }, text: String(n) };
        }
        default: {
          const t = pick(texts.filter((x) => x !== ''));
          return { value: { formula: 'TRIM(A1)', result: t }, text: t };
        }
      }
    };
    for (let round = 0; round < 8; round++) {
      const streamed = round % 2 === 1;
      const sheets = Array.from({ length: 1 + (round % 3) }, (_, k) => {
        const width = 1 + Math.floor(random() * 6);
        const rows = Array.from({ length: 1 + Math.floor(random() * 30) }, () =>
          Array.from({ length: width }, value),
        );
        return { name: `S${k + 1}`, width, rows };
      });
      let buffer: Buffer;
      const header = (width: number) => Array.from({ length: width }, (_, c) => `h${c + 1}`);
      if (streamed) {
        // the streaming writer, without shared strings (inline strings), as SheetJS writes them too
        const file = path.join(workDir, `random-${round}.xlsx`);
        await mkdir(workDir, { recursive: true });
        const writer = new ExcelJS.stream.xlsx.WorkbookWriter({
          filename: file,
          useSharedStrings: false,
          useStyles: true,
        });
        for (const sheet of sheets) {
          const ws = writer.addWorksheet(sheet.name);
          ws.addRow(header(sheet.width)).commit();
          for (const row of sheet.rows) ws.addRow(row.map((c) => c.value)).commit();
          ws.commit();
        }
        await writer.commit();
        buffer = await readFile(file);
      } else {
        const workbook = new ExcelJS.Workbook();
        for (const sheet of sheets) {
          const ws = workbook.addWorksheet(sheet.name);
          ws.addRow(header(sheet.width));
          for (const row of sheet.rows) ws.addRow(row.map((c) => c.value));
        }
        buffer = Buffer.from(await workbook.xlsx.writeBuffer());
      }
      const { loaded } = await analyse(buffer, 'xlsx');
      expect(
        loaded.sheets.map((s) => s.name),
        `round ${round}`,
      ).to.deep.equal(sheets.map((s) => s.name));
      for (const [k, sheet] of sheets.entries()) {
        // rows after the last one holding something are no rows; a row of nulls before it is a blank row
        let last = sheet.rows.length;
        while (last > 0 && sheet.rows[last - 1].every((c) => c.text === null)) last--;
        const expected = sheet.rows
          .slice(0, last)
          .map((row, r) => [BigInt(r + 2), ...row.map((c) => c.text)]);
        const columns = Array.from({ length: sheet.width }, (_, c) => `c${c + 1}`).join(', ');
        const reader = await engine!.conn.runAndReadAll(
          `SELECT row_number, ${columns} FROM ${loaded.sheets[k].table} ORDER BY row_number`,
        );
        expect(reader.getRowsJS(), `round ${round}, sheet ${sheet.name}`).to.deep.equal(expected);
      }
    }
  });

  it("an XLSX load stops in the middle of a sheet when its build is cancelled: the cancel's reason, no copy left", async () => {
    const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    // enough rows that reading them takes seconds here: the cancel comes with the first progress, after 250 ms
    const rows = 500_000;
    const body = ['<row r="1"><c r="A1" t="inlineStr"><is><t>n</t></is></c></row>'];
    for (let r = 2; r <= rows + 1; r++) body.push(`<row r="${r}"><c r="A${r}"><v>${r}</v></c></row>`);
    const buffer = oneSheetWorkbook(
      'Big',
      `<worksheet xmlns="${main}"><sheetData>${body.join('')}</sheetData></worksheet>`,
    );
    const dir = path.join(workDir, 'cancelled');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'input.xlsx');
    await writeFile(file, buffer);
    engine?.close();
    engine = await openEngine({ threads: 2, memoryLimitMb: 256, tempDirectory: path.join(workDir, 'duck') });
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    let rowsAtCancel = 0;
    const failure = await loadVersion(
      engine.conn,
      fileSource(file, { format: 'xlsx', delimiter: null, sizeBytes: buffer.length }),
      {
        maxColumns: 10,
        xlsxLimits: null,
        maxRows: 1_000_000,
        workDir: dir,
        signal: controller.signal,
        // the first progress after rows were read (every 250 ms at most) cancels
        onProgress: (p) => {
          if (p.rowsRead === 0 || controller.signal.aborted) return;
          rowsAtCancel = p.rowsRead;
          controller.abort(reason);
        },
      },
    ).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).to.equal(reason);
    expect(rowsAtCancel).to.be.within(1, rows - 1);
    expect((await readdir(dir)).sort()).to.deep.equal(['input.xlsx']);
  });

  it('an XLSX that cannot be read fails as unparsable_file, naming the part and the position, never a cell', async () => {
    const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    const failureOf = (buffer: Buffer, xlsxLimits?: XlsxLimits) =>
      analyse(buffer, 'xlsx', { xlsxLimits }).then(
        () => null,
        (err: unknown) => err as AnalysisFailure,
      );
    // a sheet whose XML breaks after a cell holding a secret (a close tag that does not match)
    const malformed = await failureOf(
      oneSheetWorkbook(
        'Broken',
        `<worksheet xmlns="${main}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>secret-value</t></is></c></row>` +
          '<row r="2"><c r="A2"><v>1</v></row></sheetData></worksheet>',
      ),
    );
    expect(malformed).to.be.instanceOf(AnalysisFailure);
    expect(malformed!.reason).to.equal('unparsable_file');
    expect(malformed!.message).to.match(
      /^the workbook cannot be read: the part xl\/worksheets\/sheet1\.xml is not well-formed XML \(line \d+, column \d+\)$/,
    );
    expect(malformed!.message).not.to.include('secret');
    // not a zip at all, or a zip of something else: the same reason and words whether the upload's guards are
    // checked first (as builds and comparisons do) or the reader finds it
    for (const limits of [undefined, XLSX_TEST_LIMITS]) {
      const broken = await failureOf(Buffer.from('PK\u0003\u0004 not really a zip'), limits);
      expect([broken?.reason, broken?.message], `limits: ${!!limits}`).to.deep.equal([
        'unparsable_file',
        'the workbook cannot be read: the zip structure is broken',
      ]);
    }
    const notWorkbook = await failureOf(zip([{ name: 'notes.txt', data: 'hello' }]), XLSX_TEST_LIMITS);
    expect([notWorkbook?.reason, notWorkbook?.message]).to.deep.equal([
      'unparsable_file',
      'the workbook cannot be read: a zip file, but not an XLSX workbook',
    ]);
  });

  it('a chart sheet of an XLSX (no cells) is no sheet of the report', async () => {
    const { loaded, profile } = await analyse(chartSheetWorkbook(), 'xlsx');
    expect(loaded.sheets.map((s) => [s.index, s.name, s.rowCount])).to.deep.equal([[0, 'Data', 2]]);
    expect(profile.sheets[0].columnProfiles.map((c) => [c.name, c.distinct])).to.deep.equal([['name', 2]]);
  });

  it('an XLSX sheet is read as written: namespace prefixes, rows and cells without references, text decoded once, numbers as JavaScript writes them', async () => {
    // a part whose elements carry a prefix (x:row, x:c: ExcelJS matched bare names and read no rows), rows and
    // cells without `r` (the next row, the next column), a formula's text result holding `&amp;lt;` (the text
    // `&lt;`: ExcelJS decoded it twice, to `<`), and number cells written otherwise than JavaScript writes them
    const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    const c = (inner: string, attrs = '') => `<x:c${attrs}>${inner}</x:c>`;
    const text = (t: string) => c(`<x:is><x:t>${t}</x:t></x:is>`, ' t="inlineStr"');
    const sheet =
      `<x:worksheet xmlns:x="${main}"><x:sheetData>` +
      `<x:row>${text('name')}${text('value')}${text('formula')}</x:row>` +
      `<x:row>${text('a')}${c('<x:v>1.50</x:v>')}${c('<x:f>"&amp;lt;"</x:f><x:v>&amp;lt;</x:v>', ' t="str"')}</x:row>` +
      `<x:row r="5">${text('b')}${c('<x:v>007</x:v>')}</x:row>` +
      `<x:row>${text('c')}${c('<x:v>1E3</x:v>')}</x:row>` +
      `<x:row>${text('d')}${c('<x:v>-0</x:v>')}${c('<x:v>0.30000000000000004</x:v>', ' r="C7"')}</x:row>` +
      `<x:row>${text('e')}${c('<x:v>0.0000001</x:v>')}${c('<x:v> 12 </x:v>', ' r="C8"')}</x:row>` +
      '</x:sheetData></x:worksheet>';
    const buffer = oneSheetWorkbook('Prefixed', sheet);
    const { loaded } = await analyse(buffer, 'xlsx');
    expect(loaded.sheets.map((s) => [s.name, s.rowCount])).to.deep.equal([['Prefixed', 7]]);
    const reader = await engine!.conn.runAndReadAll(
      `SELECT row_number, c1, c2, c3 FROM ${loaded.sheets[0].table} ORDER BY row_number`,
    );
    expect(reader.getRowsJS()).to.deep.equal([
      [2n, 'a', '1.5', '&lt;'],
      [3n, null, null, null],
      [4n, null, null, null],
      [5n, 'b', '7', null],
      [6n, 'c', '1000', null],
      [7n, 'd', '0', '0.30000000000000004'],
      [8n, 'e', '1e-7', '12'],
    ]);
  });

  it('an XLSX boolean formula loads as true/false and an ISO date cell as its date, not as numbers', async () => {
    // ExcelJS reads a boolean formula's cached result as 1/0 and a t="d" cell's text as a number (2024).
    // 3,000 rows, so that some cells are split between the part's chunks; both quote styles
    const rows = 3_000;
    const cell = (ref: string, attrs: string, inner: string) => `<c r="${ref}" ${attrs}>${inner}</c>`;
    const sheetRows = Array.from({ length: rows }, (_, i) => {
      const r = i + 2;
      const day = `2024-01-${String(1 + (i % 28)).padStart(2, '0')}`;
      return (
        `<row r="${r}">` +
        // every fifth written over several lines, as a pretty-printed part is
        cell(`A${r}`, 't="b"', `${i % 5 === 0 ? '\n  ' : ''}<f>A${r}&gt;0</f><v>${i % 2}</v>`) +
        cell(`B${r}`, "t='b'", `<v>${i % 2}</v>`) +
        cell(`C${r}`, 't="d"', `<v>${day}T00:00:00</v>`) +
        cell(`D${r}`, 's="0" t=\'d\'', `<f>TODAY()</f><v>${day}T10:30:00Z</v>`) +
        cell(`E${r}`, 't="d"', `<v>${i === 0 ? 'soon' : `${day}T10:30:00+02:00`}</v>`) +
        `<c r="F${r}" t="b"/>` +
        cell(`G${r}`, 't="n"', `<f>1+1</f><v>2</v>`) +
        `</row>`
      );
    }).join('');
    const header = ['flag', 'plain', 'day', 'at', 'mixed', 'none', 'n']
      .map((h, i) => `<c r="${String.fromCharCode(65 + i)}1" t="inlineStr"><is><t>${h}</t></is></c>`)
      .join('');
    const { profile, loaded } = await analyse(
      workbookOf('Cells', `<row r="1">${header}</row>${sheetRows}`),
      'xlsx',
    );
    const byName = Object.fromEntries(profile.sheets[0].columnProfiles.map((c) => [c.name, c]));
    expect(byName.flag).to.include({ inferredType: 'boolean', nonNull: rows, min: false, max: true });
    expect(byName.plain).to.include({ inferredType: 'boolean', nonNull: rows });
    expect(byName.day).to.include({
      inferredType: 'date',
      nonNull: rows,
      min: '2024-01-01',
      max: '2024-01-28',
    });
    expect(byName.at).to.include({
      inferredType: 'datetime',
      min: '2024-01-01T10:30:00.000Z',
      max: '2024-01-28T10:30:00.000Z',
    });
    // the offset applied when loaded; a t="d" cell that is no date stays its text
    expect(byName.mixed).to.include({ inferredType: 'text', nonNull: rows });
    expect(byName.mixed.shares).to.include({ datetime: (rows - 1) / rows, text: 1 / rows });
    expect(byName.none).to.include({ nulls: rows });
    expect(byName.n).to.include({ inferredType: 'integer', min: 2, max: 2 });
    const table = loaded.sheets[0].table;
    expect(
      await column(
        `SELECT c1 || '|' || c2 || '|' || c3 || '|' || c4 || '|' || c5 FROM ${table} WHERE row_number IN (2, 3)`,
      ),
    ).to.deep.equal([
      'false|false|2024-01-01|2024-01-01 10:30:00|soon',
      'true|true|2024-01-02|2024-01-02 10:30:00|2024-01-02 08:30:00',
    ]);
  });

  it('a shared string of an XLSX with a phonetic guide loads as its text, not the guide', async () => {
    // 5,000 strings with guides, so that some are split between the part's chunks, then one in runs
    const count = 5_000;
    const strings =
      '<si><t>city</t></si>' +
      Array.from(
        { length: count },
        (_, i) =>
          `<si><t>東京${i}</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh><phoneticPr fontId="1"/></si>`,
      ).join('') +
      '<si><r><t xml:space="preserve">大阪 </t></r><r><rPr><b/></rPr><t>北区</t></r><rPh sb="0" eb="2"><t>オオサカ</t></rPh></si>';
    const cell = (r: number, index: number) => `<row r="${r}"><c r="A${r}" t="s"><v>${index}</v></c></row>`;
    const sheetRows = Array.from({ length: count + 2 }, (_, i) => cell(i + 1, i)).join('');
    const buffer = workbookOf('Cities', sheetRows, strings);
    const { loaded } = await analyse(buffer, 'xlsx');
    const table = loaded.sheets[0].table;
    expect(
      await column(
        `SELECT c1 FROM ${table} WHERE row_number IN (2, ${count + 1}, ${count + 2}) ORDER BY row_number`,
      ),
    ).to.deep.equal(['東京0', `東京${count - 1}`, '大阪 北区']);
    expect(
      await column(`SELECT count(*) FILTER (WHERE c1 = '東京' || (row_number - 2)) FROM ${table}`),
    ).to.deep.equal([BigInt(count)]);
  });

  it('rows of an XLSX sheet that hold no value (a height, a style) are rows only when a row with values follows', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Styled');
    sheet.addRow(['a', 'b']);
    sheet.addRow([1, 'x']);
    sheet.getRow(4).values = [2, 'y'];
    // row 3: a height only, between data rows; rows 5 and 60 after the data: styled empty cells, a height
    const buffer = await withSheetXml(workbook, (xml) =>
      xml
        .replace('<row r="4"', '<row r="3" ht="20" customHeight="1"/><row r="4"')
        .replace(
          '</sheetData>',
          '<row r="5"><c r="A5" s="0"/><c r="B5" s="0"/></row><row r="60" ht="20" customHeight="1"/></sheetData>',
        ),
    );
    // the row limit counts the same rows: three
    const { profile, loaded } = await analyse(buffer, 'xlsx', { maxRows: 3 });
    expect(profile.sheets[0]).to.include({ rows: 3, blankRows: 1, duplicateRows: 0 });
    expect(profile.sheets[0].columnProfiles.map((c) => c.nulls)).to.deep.equal([1, 1]);
    expect(await column(`SELECT row_number FROM ${loaded.sheets[0].table} ORDER BY 1`)).to.deep.equal([
      2n,
      3n,
      4n,
    ]);
    // the same data as CSV (blank lines at the end are not rows either)
    const csv = await analyse('a,b\n1,x\n\n2,y\n\n\n', 'csv');
    expect(csv.profile.sheets[0]).to.deep.include({
      rows: 3,
      blankRows: 1,
      duplicateRows: 0,
      columnProfiles: profile.sheets[0].columnProfiles,
    });
    let failure: unknown;
    try {
      await analyse(buffer, 'xlsx', { maxRows: 2 });
    } catch (err) {
      failure = err;
    }
    expect((failure as AnalysisFailure).reason).to.equal('too_many_rows');
  });

  it('a row holding only a cell that cannot be read is a row of the sheet, also among the first rows held to find the header', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Errors');
    sheet.addRow(['n', 'f']);
    sheet.addRow([1, 2]);
    sheet.getRow(3).values = [{ error: '#N/A' }];
    const { profile, loaded } = await analyse(Buffer.from(await workbook.xlsx.writeBuffer()), 'xlsx');
    expect(profile.sheets[0]).to.include({ rows: 2, columns: 2 });
    expect(profile.sheets[0].warnings.map((w) => [w.code, w.count])).to.deep.equal([['unreadable_cells', 1]]);
    expect(await column(`SELECT row_number FROM ${loaded.sheets[0].table} ORDER BY 1`)).to.deep.equal([
      2n,
      3n,
    ]);
  });

  it("a formula's cached result 0 or the empty text is its result, not a cell without a result", async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Formulas');
    sheet.addRow(['n', 'f']);
    sheet.addRow([1, { formula: 'A2-1', result: 0 }]);
    sheet.addRow([2, { formula: '""', result: '' }]);
    sheet.addRow([3, { formula: 'A4*2', result: 6 }]);
    sheet.addRow([4, { formula: '1/0' }]); // never calculated: no cached result
    const { profile, loaded } = await analyse(Buffer.from(await workbook.xlsx.writeBuffer()), 'xlsx');
    expect(profile.sheets[0].warnings.map((w) => [w.code, w.count])).to.deep.equal([['unreadable_cells', 1]]);
    expect(await column(`SELECT c2 FROM ${loaded.sheets[0].table} ORDER BY row_number`)).to.deep.equal([
      '0',
      null,
      '6',
      null,
    ]);
  });

  it('an XLSX number is a date when its format shows one: codes in either case, built-in ids of every locale; escaped, quoted and bracketed letters are no date', async () => {
    const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    // [numFmtId, format code (none: a built-in id), read as a date]
    const formats: Array<[number, string | null, boolean]> = [
      [164, 'YYYY-MM-DD', true], // LibreOffice writes its codes in upper case
      [165, 'DD/MM/YYYY HH:MM', true],
      [166, 'yyyy\\-mm\\-dd', true],
      [167, '[$-409]mmmm d, yyyy;@', true],
      [168, '[h]:mm', true], // elapsed hours: a duration (the test below)
      [169, '0\\h', false], // an escaped h: shown as written
      [170, '0.00" days"', false],
      [171, '_-* #,##0.00\\ [$€-407]_-;\\-* #,##0.00\\ [$€-407]_-;_-* "-"??\\ [$€-407]_-;_-@_-', false],
      [172, '0.00E+00', false],
      [173, '#,##0_);[Red](#,##0)', false],
      [14, null, true],
      [31, null, true], // yyyy"年"m"月"d"日" in a Japanese workbook, written as the id alone
      [57, null, true],
      [76, null, true], // Thai h:mm
      [37, null, false], // #,##0 ;(#,##0)
      [0, null, false], // General
    ];
    const styles =
      `<styleSheet xmlns="${main}"><numFmts count="10">` +
      formats
        .filter(([, code]) => code !== null)
        .map(
          ([id, code]) =>
            `<numFmt numFmtId="${id}" formatCode="${code!.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"/>`,
        )
        .join('') +
      `</numFmts><cellXfs count="${formats.length}">` +
      formats.map(([id]) => `<xf numFmtId="${id}" applyNumberFormat="1"/>`).join('') +
      '</cellXfs></styleSheet>';
    const header = formats.map((_, k) => `<c t="inlineStr"><is><t>f${k}</t></is></c>`).join('');
    const values = formats.map((_, k) => `<c s="${k}"><v>45292.5</v></c>`).join('');
    const sheet = `<worksheet xmlns="${main}"><sheetData><row>${header}</row><row>${values}</row></sheetData></worksheet>`;
    const buffer = oneSheetWorkbook('Formats', sheet, styles);
    const { loaded } = await analyse(buffer, 'xlsx');
    const columns = formats.map((_, k) => `c${k + 1}`).join(', ');
    const reader = await engine!.conn.runAndReadAll(`SELECT ${columns} FROM ${loaded.sheets[0].table}`);
    const [cells] = reader.getRowsJS();
    expect(formats.map(([id, code], k) => [id, code, cells[k]])).to.deep.equal(
      formats.map(([id, code, date]) => [
        id,
        code,
        id === 168 ? '1087020:00:00' : date ? '2024-01-01 12:00:00' : '45292.5',
      ]),
    );
  });

  it('an XLSX number formatted as a time of day alone or a duration loads as the sheet shows it, not as a date in 1899', async () => {
    const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    // [numFmtId, format code (none: a built-in id), the serial, the cell as loaded]
    const cases: Array<[number, string | null, number, string]> = [
      [164, 'h:mm', 0.3541666666666667, '08:30:00'],
      [165, 'hh:mm:ss AM/PM', 0.75, '18:00:00'],
      [166, 'MM:SS', 1 / 1440, '00:01:00'],
      [20, null, 0, '00:00:00'], // h:mm
      [21, null, 0.5 + 0.5 / 86_400, '12:00:00.500'], // h:mm:ss
      [45, null, 0.25 / 24, '00:15:00'], // mm:ss
      [32, null, 0.25, '06:00:00'], // h"時"mm"分" in a Japanese workbook
      [76, null, 0.5, '12:00:00'], // Thai H:mm:ss
      [167, '[h]:mm:ss', 1.5, '36:00:00'],
      [46, null, -0.25, '-06:00:00'], // [h]:mm:ss
      [168, '[mm]:ss', 0.0625, '01:30:00'],
      [169, 'h:mm', 45292.5, '2024-01-01 12:00:00'], // a whole date and time: as a date
      [170, 'yyyy-mm-dd h:mm', 0.5, '1899-12-30 12:00:00'], // a date format: a date, whatever the serial
      [171, '"h:mm"0.00', 0.5, '0.5'], // quoted: no time
    ];
    const styles =
      `<styleSheet xmlns="${main}"><numFmts>` +
      cases
        .filter(([, code]) => code !== null)
        .map(([id, code]) => `<numFmt numFmtId="${id}" formatCode="${code!.replace(/"/g, '&quot;')}"/>`)
        .join('') +
      `</numFmts><cellXfs>` +
      cases.map(([id]) => `<xf numFmtId="${id}" applyNumberFormat="1"/>`).join('') +
      '</cellXfs></styleSheet>';
    const header = cases.map((_, k) => `<c t="inlineStr"><is><t>t${k}</t></is></c>`).join('');
    const values = cases.map(([, , serial], k) => `<c s="${k}"><v>${serial}</v></c>`).join('');
    const sheet = `<worksheet xmlns="${main}"><sheetData><row>${header}</row><row>${values}</row></sheetData></worksheet>`;
    const { loaded, profile } = await analyse(oneSheetWorkbook('Times', sheet, styles), 'xlsx');
    const columns = cases.map((_, k) => `c${k + 1}`).join(', ');
    const [cells] = (
      await engine!.conn.runAndReadAll(`SELECT ${columns} FROM ${loaded.sheets[0].table}`)
    ).getRowsJS();
    expect(cases.map(([id, code], k) => [id, code, cells[k]])).to.deep.equal(
      cases.map(([id, code, , text]) => [id, code, text]),
    );
    // there is no time type: a time of day is text; the whole date and time a datetime
    expect(profile.sheets[0].columnProfiles.map((c) => c.inferredType)).to.deep.equal(
      cases.map(([, , , text]) => (/^\d{4}-/.test(text) ? 'datetime' : text === '0.5' ? 'decimal' : 'text')),
    );
  });

  it("an XLSX whose workbook, relationships and styles use single quotes, spaces around '=' and another relationship prefix reads as Excel's own", async () => {
    const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    const type = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
    const cell = (r: string, inner: string, attrs = '') => `<c r='${r}'${attrs}>${inner}</c>`;
    const buffer = zip([
      { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
      {
        name: 'xl/workbook.xml',
        data:
          `<x:workbook xmlns:x='${main}' xmlns:rel='${type}'><x:workbookPr date1904 = '1'/>` +
          `<x:sheets><x:sheet sheetId='1' name='Données &amp; dates' rel:id = 'rIdA'/></x:sheets></x:workbook>`,
      },
      {
        name: 'xl/_rels/workbook.xml.rels',
        data:
          `<Relationships xmlns='http://schemas.openxmlformats.org/package/2006/relationships'>` +
          `<Relationship Target='worksheets/data.xml' Type='${type}/worksheet' Id='rIdA'/>` +
          `<Relationship Target='looks.xml' Type='${type}/styles' Id='rIdB'/></Relationships>`,
      },
      {
        name: 'xl/looks.xml',
        data:
          `<styleSheet xmlns='${main}'><numFmts><numFmt formatCode='yyyy"-"mm"-"dd' numFmtId='170'/></numFmts>` +
          `<cellXfs><xf numFmtId='0'/><xf numFmtId = '170'/></cellXfs></styleSheet>`,
      },
      {
        name: 'xl/worksheets/data.xml',
        data:
          `<worksheet xmlns='${main}'><sheetData>` +
          `<row r='1'>${cell('A1', '<is><t>day</t></is>', " t='inlineStr'")}</row>` +
          `<row r='2'>${cell('A2', '<v>43831</v>', " s='1'")}</row>` +
          `</sheetData></worksheet>`,
      },
    ]);
    const { loaded, profile } = await analyse(buffer, 'xlsx');
    expect(profile.sheets.map((s) => s.name)).to.deep.equal(['Données & dates']);
    // a date (the style's format) counted from 1904: 43831 days after 1904-01-01
    expect(await column(`SELECT c1 FROM ${loaded.sheets[0].table}`)).to.deep.equal(['2024-01-02']);
  });

  it("a date-formatted formula's cached result is a date, as a date-formatted cell is (1900 and 1904 workbooks)", async () => {
    for (const date1904 of [false, true]) {
      const workbook = invoiceWorkbook(date1904, {
        header: 'days',
        value: (r) => ({ formula: `B${r}-A${r}`, result: 30 }),
        numFmt: '0" days"',
      });
      const { profile, loaded } = await analyse(Buffer.from(await workbook.xlsx.writeBuffer()), 'xlsx');
      const [, due, reminder, days] = profile.sheets[0].columnProfiles;
      expect(
        [due, reminder, days].map((c) => [c.inferredType, c.min, c.max]),
        `date1904: ${date1904}`,
      ).to.deep.equal([
        ['date', '2024-01-31', '2024-02-14'],
        ['datetime', '2024-01-31T10:30:00.000Z', '2024-02-14T10:30:00.000Z'],
        ['integer', 30, 30],
      ]);
      expect(
        await column(`SELECT c1 || ' ' || c2 FROM ${loaded.sheets[0].table} ORDER BY row_number`),
      ).to.deep.equal(['2024-01-01 2024-01-31', '2024-01-15 2024-02-14']);
    }
  });

  it('an XLSX cell whose text is empty is null, as an empty CSV cell: blank rows, duplicates, not_null', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Empty texts');
    sheet.addRow(['a', 'b']);
    sheet.addRow([1, 'x']);
    sheet.addRow([2, 'y']);
    // rows 4–6: formulas whose cached result is the empty text; rows 7–8: empty inline strings and string
    // cells (written over the placeholders below); row 8's b holds a value
    for (const n of [4, 5, 6])
      sheet.getRow(n).values = [
        { formula: '""', result: '' },
        { formula: '""', result: '' },
      ];
    sheet.getRow(7).values = ['EMPTY', 'EMPTY'];
    sheet.getRow(8).values = ['EMPTY', 'z'];
    sheet.getRow(9).values = [3, 'w'];
    const buffer = await withSheetXml(workbook, (xml) =>
      xml
        .replace(
          /<row r="7"[^>]*>.*?<\/row>/,
          '<row r="7"><c r="A7" t="inlineStr"><is><t></t></is></c><c r="B7" t="str"><v></v></c></row>',
        )
        .replace(/<c r="A8"[^>]*>.*?<\/c>/, '<c r="A8" t="inlineStr"><is><t/></is></c>'),
    );
    const rules: BuildRule[] = ['a', 'b'].map((c) => ({
      id: `r-${c}`,
      name: `${c} not null`,
      kind: 'not_null',
      column: c,
      params: {},
      severity: 'error',
      tolerance: '0',
    }));
    const xlsx = await analyse(buffer, 'xlsx', { steps: [rulesStep(rules)] });
    const [sheetProfile] = xlsx.profile.sheets;
    // rows 4–7 are blank rows (every cell empty), not duplicates of each other
    expect(sheetProfile).to.include({ rows: 8, blankRows: 4, duplicateRows: 0 });
    expect(sheetProfile.warnings).to.deep.equal([]);
    expect(sheetProfile.columnProfiles.map((c) => c.nulls)).to.deep.equal([5, 4]);
    expect(
      await column(`SELECT count(*) FROM ${xlsx.loaded.sheets[0].table} WHERE c1 = '' OR c2 = ''`),
    ).to.deep.equal([0n]);
    const quality = xlsx.sections.quality as QualitySection;
    expect(
      quality.rules.map((r) => [r.status, r.evaluatedUnits, r.failedUnits, r.failingRows]),
    ).to.deep.equal([
      ['failed', 4, 1, [8]],
      ['passed', 4, 0, []],
    ]);
    // the same data as CSV: the same profile and the same rule outcomes
    const csv = await analyse('a,b\n1,x\n2,y\n,\n,\n,\n,\n,z\n3,w\n', 'csv', { steps: [rulesStep(rules)] });
    expect(csv.profile.sheets[0]).to.deep.include({
      rows: 8,
      blankRows: 4,
      duplicateRows: 0,
      columnProfiles: sheetProfile.columnProfiles,
    });
    // (without the sheet names: a CSV's sheet is named after its format)
    const unnamed = (value: unknown): unknown =>
      JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'sheet' ? undefined : v)));
    expect(unnamed(csv.sections.quality)).to.deep.equal(unnamed(quality));
  });
});
