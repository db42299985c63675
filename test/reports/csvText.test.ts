import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import {
  type DownloadFacts,
  downloadChecked,
  quotedGroupedStart,
  scanSlashDates,
  unitNextToDigit,
  errorValueIn,
} from '../../domain/reports/engine/csvText';

describe('reports: the download check of a CSV/TSV (pure)', () => {
  let dir: string;
  let copies = 0;
  /**
   * The download check of `text` arriving in every way: one byte a chunk, and cut into two chunks at every
   * position; `check` sees each way's facts (with a description of the way) and the copy's path.
   */
  const atEveryCut = async (
    text: string,
    check: (facts: DownloadFacts, way: string, copy: string) => unknown,
  ) => {
    const bytes = Buffer.from(text);
    const ways: Buffer[][] = [Array.from(bytes, (b) => Buffer.from([b]))];
    for (let cut = 1; cut < bytes.length; cut++) ways.push([bytes.subarray(0, cut), bytes.subarray(cut)]);
    for (const chunks of ways) {
      const copy = path.join(dir, `copy-${copies++}.csv`);
      const facts = await downloadChecked(Readable.from(chunks), copy, () => undefined);
      await check(facts, `${JSON.stringify(text)} in ${chunks.length} chunks (${chunks[0].length})`, copy);
    }
  };
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'csvtext-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('quotedGroupedStart: a quote followed by spaces, a sign, one to three digits and a comma', () => {
    for (const yes of ['a,"1,234"', '"12,345.5"', '" -123,456"', 'x,"+1,000",y']) {
      expect(quotedGroupedStart(Buffer.from(yes)), yes).to.equal(true);
    }
    for (const no of ['"n, 5"', '"1234,5"', '"a,b"', '"1.5"', 'no quote 1,234', '",5"', '"-,1"']) {
      expect(quotedGroupedStart(Buffer.from(`${no},x\n`)), no).to.equal(-1);
    }
    // bytes that end before it is decided: the offset of that quote
    expect(quotedGroupedStart(Buffer.from('a,"n",b,"12'))).to.equal(8);
    expect(quotedGroupedStart(Buffer.from('a,"  '))).to.equal(2);
  });

  it('downloadChecked finds a grouped number after a quote wherever the chunks cut it, and copies every byte', async () => {
    const cases: Array<[string, boolean]> = [
      ['id,amount,note\n1,"1,234.5","a,b"\n2,7,x\n', true],
      ['id,amount,note\n1,"  -12,345",x\n', true],
      ['id,amount,note\n1,"n, 5","a,b"\n2,"1234,5",x\n', false],
      ['id,amount\n1,2\n', false],
      ['id,amount\n1,"12', false], // the file ends inside the quoted cell, before any comma
    ];
    for (const [text, expected] of cases) {
      await atEveryCut(text, async (facts, way, copy) => {
        expect(facts.groupedNumbers, way).to.equal(expected);
        expect(facts.quoteFree).to.equal(!text.includes('"'));
        expect((await readFile(copy)).equals(Buffer.from(text))).to.equal(true);
      });
    }
  });

  it('scanSlashDates: D/M/YYYY or M/D/YYYY, one or two digits, a real day or month, not inside other digits; YYYY/M/D', () => {
    const seen = (text: string) => {
      const evidence = { dayFirst: false, monthFirst: false, yearFirst: false };
      scanSlashDates(Buffer.from(text), 0, evidence, true, true);
      return evidence;
    };
    for (const monthFirst of [
      '3/15/2024',
      'x,12/31/1999 23:00\n',
      '"1/13/2024"',
      '1/2/2024,3/15/2024',
      ' 3/15/2024 2:30 PM',
    ]) {
      expect(seen(monthFirst), monthFirst).to.deep.equal({
        dayFirst: false,
        monthFirst: true,
        yearFirst: false,
      });
    }
    for (const dayFirst of ['15/3/2024', 'x;31/12/1999\n', '13/01/2024 9:00']) {
      expect(seen(dayFirst), dayFirst).to.deep.equal({ dayFirst: true, monthFirst: false, yearFirst: false });
    }
    for (const yearFirst of ['2024/3/15', 'x,2024/12/31 23:00\n', '"1999/1/2"', '2024/03/05,']) {
      expect(seen(yearFirst), yearFirst).to.deep.equal({
        dayFirst: false,
        monthFirst: false,
        yearFirst: true,
      });
    }
    const none = { dayFirst: false, monthFirst: false, yearFirst: false };
    for (const no of [
      '2024/13/1',
      '2024/1/32',
      '2024/1/123',
      '12024/1/2',
      '024/1/2',
      '2024/1/2/3',
      '3/4/2024',
      '12/12/2024',
      '13/13/2024',
      '0/15/2024',
      '32/1/2024',
      '3/15/24',
      '3/15/20245',
      '123/1/2024',
      '1/123/2024',
      '1.3/15/2024',
      '3/15/2024/1',
      '3-15-2024',
      'a/b',
      '1/2',
    ]) {
      expect(seen(no), no).to.deep.equal(none);
    }
    expect(seen('15/3/2024,3/15/2024,2024/3/15')).to.deep.equal({
      dayFirst: true,
      monthFirst: true,
      yearFirst: true,
    });
    // a year or a day at the end of the bytes is judged only at the end of the file
    for (const text of ['x,3/15/2024', 'x,2024/3/15']) {
      const open = { dayFirst: false, monthFirst: false, yearFirst: false };
      scanSlashDates(Buffer.from(text), 0, open, true, false);
      expect(open).to.deep.equal(none);
    }
  });

  it('unitNextToDigit: a currency sign next to a digit (a space and a sign between allowed), a percent sign after one, a parenthesis before one', () => {
    for (const yes of [
      '$1',
      '1$',
      '$ 1',
      '$ -1',
      '$+1',
      '1 €',
      '€1',
      '£ 7',
      '¥1000',
      '12%',
      '12 %',
      'x,"$1,234.50"',
      '(1',
      '( 1,234.50)',
    ]) {
      expect(unitNextToDigit(Buffer.from(yes)), yes).to.equal(true);
    }
    for (const no of [
      '$',
      '%',
      'Price in $',
      '$ x',
      '% 12',
      '%12',
      '1  %',
      '$  1',
      'USD 5',
      '100 percent',
      '$-x',
      '(a)',
      '1(',
      '( x 1',
    ]) {
      expect(unitNextToDigit(Buffer.from(no)), no).to.equal(false);
    }
  });

  it('downloadChecked finds a currency or percent sign next to a digit wherever the chunks cut them', async () => {
    const cases: Array<[string, boolean]> = [
      ['id,amount\n1,"$1,234.50"\n', true],
      ['id;amount\n1;1.234,50 €\n', true],
      ['id,rate\n1,12%', true],
      ['id,rate\n1,$ -5\n', true],
      ['id,amount\n1,"(1,234.50)"\n', true],
      ['id,note\n1,50 percent in $\n', false],
    ];
    for (const [text, expected] of cases) {
      await atEveryCut(text, (facts, way) => expect(facts.units, way).to.equal(expected));
    }
  });

  it('errorValueIn: a spreadsheet error value anywhere, wherever the chunks cut it', async () => {
    for (const yes of [
      '#DIV/0!',
      'x,#REF!',
      '"#NAME?"',
      '#¡VALOR!',
      '#¿NOMBRE?',
      'a;#WERT!;b',
      '#GETTING_DATA',
    ]) {
      expect(errorValueIn(Buffer.from(yes)), yes).to.equal(true);
    }
    for (const no of ['#', '#123', '#DIV', '#REF', '#N/A', 'DIV/0!', '#div/0!', '#¡']) {
      expect(errorValueIn(Buffer.from(no)), no).to.equal(false);
    }
    for (const [text, expected] of [
      ['id,v\n1,#DIV/0!\n', true],
      ['id;v\n1;#¡VALOR!', true],
      ['id,v\n1,#123\n2,#N/A\n', false],
    ] as const) {
      await atEveryCut(text, (facts, way) => expect(facts.errorValues, way).to.equal(expected));
    }
  });

  it('downloadChecked finds the order of dates with slashes wherever the chunks cut them, in the whole file', async () => {
    const cases: Array<[string, 'day-first' | 'month-first' | null, boolean?]> = [
      ['id,day\n1,1/2/2024\n2,3/15/2024\n', 'month-first'],
      ['id,day\n1,1/2/2024\n2,3/15/2024', 'month-first'],
      ['id,day\n1,15/3/2024\n2,1/2/2024', 'day-first'],
      ['3/15/2024,x\n', 'month-first'],
      ['id,day\n1,1/2/2024\n2,3/4/2024\n', null],
      ['id,day\n1,15/3/2024\n2,3/15/2024\n', null],
      ['id,day\n1,113/1/2024\n2,3/15/20244\n', null],
      ['id,day\n1,2024/3/15\n2,2024/12/1', null, true],
      ['2024/3/15,15/3/2024\n', 'day-first', true],
      ['id,day\n1,12024/3/15\n2,2024/13/1\n', null, false],
    ];
    for (const [text, expected, yearFirst = false] of cases) {
      await atEveryCut(text, (facts, way) => {
        expect(facts.slashDates, way).to.equal(expected);
        expect(facts.yearFirstDates, way).to.equal(yearFirst);
      });
    }
    // a date far past the file's first 64 KB tells the order
    const rows = ['id,day', ...Array.from({ length: 20_000 }, (_, i) => `${i},1/2/2024`), '20000,1/13/2024'];
    const big = Buffer.from(rows.join('\n') + '\n');
    expect(big.length).to.be.greaterThan(128 * 1024);
    const chunks = Array.from({ length: Math.ceil(big.length / 65536) }, (_, i) =>
      big.subarray(i * 65536, (i + 1) * 65536),
    );
    const facts = await downloadChecked(
      Readable.from(chunks),
      path.join(dir, 'dates-big.csv'),
      () => undefined,
    );
    expect(facts.slashDates).to.equal('month-first');
  });
});
