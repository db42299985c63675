import { expect } from 'chai';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UploadInspector } from '../../../domain/files/inspect';
import { LINE_ENDINGS, countLines } from '../../../domain/files/lineEndings';
import { previewStream } from '../../../domain/files/preview';
import { recordsOf, sniff } from '../../../domain/files/sniff';

const limits = { maxRows: 1000, maxColumns: 10 };
const previewOptions = { rows: 10, maxColumns: 10, maxCellChars: 100 };

/** Rows the inspector counts when the text arrives in chunks of `size` bytes. */
async function inspectedRows(text: string, size: number): Promise<number | null> {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  const inspector = new UploadInspector('x.csv', limits);
  await pipeline(Readable.from(chunks), inspector, async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) void chunk;
  });
  return inspector.dataRows;
}

/** the field counts of the first records */
const widths = (text: string, delimiter: string, complete: boolean, max: number) =>
  recordsOf(text, delimiter, complete, max).map((r) => r.width);

describe('line endings: one rule (\\r\\n, \\n and a bare \\r each end a record) for sniffing, counting and preview', () => {
  const forms = {
    cr: 'a,b\r1,2\r3,4\r',
    crNoFinal: 'a,b\r1,2\r3,4',
    lf: 'a,b\n1,2\n3,4\n',
    crlf: 'a,b\r\n1,2\r\n3,4\r\n',
    mixed: 'a,b\n1,2\r3,4\r\n',
    mixedNoFinal: 'a,b\r\n1,2\n3,4',
  };

  it('names the rule the upload records in its dialect', () => {
    expect(LINE_ENDINGS).to.equal('crlf-lf-cr');
  });

  for (const [name, text] of Object.entries(forms)) {
    it(`${name}: sniffed as 2 columns, 2 rows counted (in any chunking), previewed as 2 × 2`, async () => {
      expect(sniff(Buffer.from(text), true, 'x.csv', limits)).to.deep.equal({
        format: 'csv',
        delimiter: ',',
        columns: 2,
        lineEndings: LINE_ENDINGS,
        encoding: 'utf-8',
      });
      expect(widths(text, ',', true, 10)).to.deep.equal([2, 2, 2]);
      for (const size of [1, 2, 3, 1000])
        expect(await inspectedRows(text, size), `chunks of ${size}`).to.equal(2);
      const preview = await previewStream(Readable.from([Buffer.from(text)]), 'csv', ',', previewOptions);
      expect(preview).to.deep.equal({
        columns: ['a', 'b'],
        rows: [
          ['1', '2'],
          ['3', '4'],
        ],
        moreRows: false,
        moreColumns: false,
      });
    });
  }

  it('a line break inside quotes ends no record for sniffing and preview', async () => {
    const text = 'a,b\r"x\ry",2\r3,4\r';
    expect(widths(text, ',', true, 10)).to.deep.equal([2, 2, 2]);
    const preview = await previewStream(Readable.from([Buffer.from(text)]), 'csv', ',', previewOptions);
    expect(preview.rows).to.deep.equal([
      ['x\ry', '2'],
      ['3', '4'],
    ]);
  });

  it('counts line breaks across chunks: \\r at the end of one chunk and \\n at the start of the next are one', () => {
    expect(countLines([Buffer.from('a\r'), Buffer.from('\nb\r'), Buffer.from('c')])).to.equal(3);
    expect(countLines([Buffer.from('a\r\r\n\n')])).to.equal(3);
  });

  it('a sample without any line break in its first bytes is refused; a bare \\r is a line break', () => {
    const long = 'a,b' + ',x'.repeat(40_000);
    expect(() => sniff(Buffer.from(long), false, 'x.csv', limits)).to.throw(/no line break/);
    expect(sniff(Buffer.from('a,b\r1,2\r' + 'x'.repeat(70_000)), false, 'x.csv', limits)).to.include({
      columns: 2,
    });
  });
});
