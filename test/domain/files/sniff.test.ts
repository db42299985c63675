import { expect } from 'chai';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UploadInspector } from '../../../domain/files/inspect';
import { delimiterFit, incompleteUtf8Tail, recordsOf, sniff } from '../../../domain/files/sniff';
import { columnNumber, parseDimension } from '../../../domain/files/xlsx';
import { uuidv7 } from '../../../common/ids';

const limits = { maxRows: 1000, maxColumns: 10 };

/** the field counts of the first records */
const widths = (text: string, delimiter: string, complete: boolean, max: number) =>
  recordsOf(text, delimiter, complete, max).map((r) => r.width);

describe('file sniffing (pure)', () => {
  it('finds the delimiter by consistent field counts, quote-aware, preferring the widest', () => {
    expect(sniff(Buffer.from('a,b,c\n1,2,3\n'), true, 'x', limits)).to.deep.equal({
      format: 'csv',
      delimiter: ',',
      columns: 3,
      lineEndings: 'crlf-lf-cr',
      encoding: 'utf-8',
    });
    // a Windows-1252 file (München, €) reads as such; its delimiter is found in its decoded text
    expect(sniff(Buffer.from('Stadt;Betrag\nM\xfcnchen;\x80 5\n', 'latin1'), true, 'x', limits)).to.include({
      delimiter: ';',
      columns: 2,
      encoding: 'windows-1252',
    });
    expect(sniff(Buffer.from('a;b\n"1;2";3\n'), true, 'x.csv', limits)).to.include({
      delimiter: ';',
      columns: 2,
    });
    expect(sniff(Buffer.from('a\tb,c\n1\t2,3\n'), true, 'x.tsv', limits)).to.include({
      format: 'tsv',
      columns: 2,
    });
    expect(sniff(Buffer.from('PK\x03\x04rest'), false, 'x', limits)).to.deep.equal({ format: 'xlsx' });
    expect(() => sniff(Buffer.from('a,b\n1\n2\n3,4\n'), true, 'x', limits)).to.throw(
      /no consistent delimiter/,
    );
    expect(() => sniff(Buffer.from(''), true, 'x', limits)).to.throw('the file is empty');
    expect(() => sniff(Buffer.from('a,b,c,d,e,f,g,h,i,j,k\n'), true, 'x', limits)).to.throw(/11 columns/);
  });

  it('accepts ragged records (trailing cells left out, cells beyond the header) but not prose', () => {
    // exported without trailing empty cells
    expect(
      sniff(Buffer.from('id,name,city,zip\n1,Ann\n2,Bob,Oslo\n3,Cy,Rome,00100\n'), true, 'x', limits),
    ).to.include({
      delimiter: ',',
      columns: 4,
    });
    // a record wider than the header: the header still gives the column count
    expect(sniff(Buffer.from('a,b\n1,2,3\n'), true, 'x', limits)).to.include({ delimiter: ',', columns: 2 });
    // a semicolon file with commas in its cells: the delimiter that makes rows as wide as the header wins
    expect(sniff(Buffer.from('name;note;n\nDoe, J;a, b, c;1\nRoe;x;2\n'), true, 'x', limits)).to.include({
      delimiter: ';',
      columns: 3,
    });
    expect(sniff(Buffer.from('a,b;c;d\n1,2;3;4\n5;6;7\n'), true, 'x', limits)).to.include({
      delimiter: ';',
      columns: 3,
    });
    // a sparse sheet: most records hold the delimiter
    expect(sniff(Buffer.from('a\tb\tc\n1\n2\t3\n4\t5\t6\n'), true, 'x.tsv', limits)).to.include({
      format: 'tsv',
      columns: 3,
    });
    for (const prose of [
      'Dear customer, thank you.\nWe are glad; really.\nBye\n',
      'name\nalice\nbob\n',
      'a;b\nc\nd\ne;f\n',
    ])
      expect(() => sniff(Buffer.from(prose), true, 'x', limits), prose).to.throw(/no consistent delimiter/);
    expect(delimiterFit([3, 3, 1, 3], ',')).to.deep.equal({ delimiter: ',', columns: 3, exact: 2 / 3 });
    expect(delimiterFit([3], ',')).to.deep.equal({ delimiter: ',', columns: 3, exact: 1 });
    expect(delimiterFit([1, 3, 3], ',')).to.equal(undefined);
    expect(delimiterFit([2, 1, 2], ';')).to.deep.equal({ delimiter: ';', columns: 2, exact: 0.5 });
    expect(delimiterFit([2, 1, 1, 2], ';')).to.equal(undefined);
  });

  it('counts fields across quoted line breaks and escaped quotes; an incomplete last record is left out', () => {
    expect(widths('a,b\n"x\ny","q""z"\n', ',', true, 10)).to.deep.equal([2, 2]);
    expect(widths('a,b\n1,2\n3', ',', false, 10)).to.deep.equal([2, 2]);
    expect(widths('a,b\n1,2\n3', ',', true, 10)).to.deep.equal([2, 2, 1]);
    expect(widths('a,b\r\n\r\n1,2\r\n', ',', true, 10)).to.deep.equal([2, 2]);
  });

  it('finds a UTF-8 sequence cut at the end of a chunk', () => {
    const euro = Buffer.from('€'); // 3 bytes
    expect(incompleteUtf8Tail(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]))).to.equal(2);
    expect(incompleteUtf8Tail(Buffer.concat([Buffer.from('a'), euro]))).to.equal(0);
    expect(incompleteUtf8Tail(Buffer.from('abc'))).to.equal(0);
  });

  it('reads an XLSX <dimension>', () => {
    expect(columnNumber('A')).to.equal(1);
    expect(columnNumber('XFD')).to.equal(16384);
    expect(parseDimension('<worksheet><dimension ref="B2:D11"/>')).to.deep.equal({ rows: 9, columns: 3 });
    expect(parseDimension('<x:dimension ref="A1"/>')).to.deep.equal({ rows: 0, columns: 1 });
    expect(parseDimension('<worksheet><sheetData/>')).to.equal(null);
    expect(parseDimension("<worksheet><dimension ref = 'A1:C5'/>")).to.deep.equal({ rows: 4, columns: 3 });
  });

  it('UUIDv7 ids sort by creation time', () => {
    const a = uuidv7(1_700_000_000_000);
    const b = uuidv7(1_700_000_000_001);
    expect(a).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a < b).to.equal(true);
  });
});

describe('UploadInspector (pure)', () => {
  async function inspect(chunks: Buffer[], maxBytes?: number, maxRows = 1_000_000) {
    const inspector = new UploadInspector('t.csv', { maxRows, maxColumns: 10 }, maxBytes);
    const out: Buffer[] = [];
    await pipeline(Readable.from(chunks), inspector, async function* (source) {
      for await (const c of source) out.push(c as Buffer);
    });
    return { inspector, bytes: Buffer.concat(out) };
  }

  it('passes the bytes through unchanged and counts rows, with UTF-8 split across chunks', async () => {
    const text = Buffer.from('name,city\nZoë,Zürich\n€uro,x\n');
    const cut = text.indexOf(Buffer.from('€')) + 1;
    const { inspector, bytes } = await inspect([text.subarray(0, cut), text.subarray(cut)]);
    expect(bytes.equals(text)).to.equal(true);
    expect(inspector.dataRows).to.equal(2);
    expect(inspector.sniffed).to.deep.include({ format: 'csv', columns: 2 });
  });

  async function statusOf(run: Promise<unknown>): Promise<number | undefined> {
    try {
      await run;
      return undefined;
    } catch (err) {
      return (err as { statusCode?: number }).statusCode;
    }
  }

  it('counts a last line without a line break against the row limit', async () => {
    // header + 2 rows: at the limit, with or without a final line break
    expect((await inspect([Buffer.from('a,b\n1,2\n3,4')], undefined, 2)).inspector.dataRows).to.equal(2);
    expect((await inspect([Buffer.from('a,b\n1,2\n3,4\n')], undefined, 2)).inspector.dataRows).to.equal(2);
    // header + 3 rows: over it, also when the third row has no line break
    expect(await statusOf(inspect([Buffer.from('a,b\n1,2\n3,4\n5,6\n')], undefined, 2))).to.equal(400);
    expect(await statusOf(inspect([Buffer.from('a,b\n1,2\n3,4\n5,6')], undefined, 2))).to.equal(400);
  });

  it('passes exactly maxBytes bytes and answers 413 at one byte more', async () => {
    const text = Buffer.from('a,b\n1,2\n'); // 8 bytes
    const { bytes } = await inspect([text.subarray(0, 3), text.subarray(3)], text.length);
    expect(bytes.equals(text)).to.equal(true);
    const longer = Buffer.from('a,b\n1,22\n'); // 9 bytes
    expect(await statusOf(inspect([longer.subarray(0, 3), longer.subarray(3)], text.length))).to.equal(413);
  });

  it('fails with 413 past the byte limit and 400 on UTF-8 mixed with bytes UTF-8 refuses after the sniffed start', async () => {
    const big = Buffer.alloc(70_000, 'a,b\n');
    try {
      await inspect([big, big], 100_000);
      expect.fail('no error');
    } catch (err) {
      expect((err as { statusCode: number }).statusCode).to.equal(413);
    }
    const utf8 = Buffer.from('Zürich,1\n');
    for (const chunks of [
      [big, utf8, Buffer.from([0xff, 0x0a])],
      [big, Buffer.concat([utf8, Buffer.from([0xfc, 0x0a])])],
      [Buffer.from('a,b\nZ\xfcrich,1\n', 'latin1'), utf8],
      // UTF-8's byte order mark, then a byte UTF-8 refuses
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a,b\nZ\xfcrich,1\n', 'latin1')])],
    ]) {
      try {
        await inspect(chunks);
        expect.fail('no error');
      } catch (err) {
        expect((err as { statusCode: number }).statusCode).to.equal(400);
        expect((err as Error).message).to.match(/mixes UTF-8 with bytes UTF-8 does not allow/);
      }
    }
  });

  it('reads a text that is not UTF-8 as Windows-1252, decided in its first bytes or after them', async () => {
    const big = Buffer.alloc(70_000, 'a,b\n');
    const cp1252 = Buffer.from([0x4d, 0xfc, 0x6e, 0x63, 0x68, 0x65, 0x6e, 0x2c, 0x80, 0x0a]); // München,€
    // in the sniffed start
    const early = await inspect([Buffer.concat([Buffer.from('a,b\n'), cp1252])]);
    expect(early.inspector.sniffed).to.deep.include({ encoding: 'windows-1252', columns: 2 });
    expect(early.inspector.encoding).to.equal('windows-1252');
    expect(early.inspector.dataRows).to.equal(1);
    // after an ASCII start, and a last byte that would begin a UTF-8 sequence
    const late = await inspect([big, cp1252, Buffer.from([0x31, 0x2c, 0xe9])]);
    expect(late.inspector.sniffed).to.deep.include({ encoding: 'utf-8' });
    expect(late.inspector.encoding).to.equal('windows-1252');
    expect(late.bytes.equals(Buffer.concat([big, cp1252, Buffer.from([0x31, 0x2c, 0xe9])]))).to.equal(true);
    // only the last byte, which would begin a UTF-8 sequence
    expect((await inspect([big, Buffer.from([0x31, 0x2c, 0xe9])])).inspector.encoding).to.equal(
      'windows-1252',
    );
    // UTF-16 after its byte order mark, little- or big-endian, a character cut between chunks at any byte (past
    // the sniffed start: the inspector decodes chunk by chunk there)
    const text = `a\tb\r\n${'x\ty\r\n'.repeat(6000)}München\t€\r\n𝔘\t2\r\n`;
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
    const surrogate = le.length - 12; // 𝔘 is two code units, its first byte 12 bytes before the end
    for (const [bytes, encoding] of [
      [le, 'utf-16le'],
      [be, 'utf-16be'],
    ] as const) {
      for (const cut of [70_001, 70_002, surrogate + 1, surrogate + 2, surrogate + 3]) {
        const { inspector } = await inspect([bytes.subarray(0, cut), bytes.subarray(cut)]);
        expect(inspector.encoding).to.equal(encoding);
        expect(inspector.sniffed).to.deep.include({ format: 'tsv', columns: 2 });
        expect(inspector.dataRows, `${encoding} cut at ${cut}`).to.equal(6002);
      }
    }
    // UTF-8 stays UTF-8
    expect((await inspect([Buffer.from('a,b\nZürich,1\n')])).inspector.encoding).to.equal('utf-8');
    expect((await inspect([Buffer.from('a,b\n1,2\n')])).inspector.encoding).to.equal('utf-8');
  });
});
