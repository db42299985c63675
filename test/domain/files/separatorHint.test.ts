import { expect } from 'chai';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UploadInspector } from '../../../domain/files/inspect';
import { previewStream } from '../../../domain/files/preview';
import { separatorLine, tableText, withoutSeparatorLine } from '../../../domain/files/separatorHint';
import { sniff } from '../../../domain/files/sniff';

const limits = { maxRows: 1000, maxColumns: 10 };

async function drain(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** the bytes cut at every position into two chunks, and one byte a chunk */
function cuts(bytes: Buffer): Buffer[][] {
  const ways: Buffer[][] = [];
  for (let at = 0; at <= bytes.length; at++) ways.push([bytes.subarray(0, at), bytes.subarray(at)]);
  ways.push(Array.from(bytes, (b) => Buffer.from([b])));
  return ways;
}

describe("Excel's separator line (sep=;)", () => {
  it('is the first line, `sep=` in any case and one character, after an optional byte order mark', () => {
    expect(separatorLine('sep=;\na;b\n', true)).to.deep.equal({ delimiter: ';', length: 6 });
    expect(separatorLine('SEP=,\r\na,b', true)).to.deep.equal({ delimiter: ',', length: 7 });
    expect(separatorLine('\ufeffsep=\t\ra\tb', true)).to.deep.equal({ delimiter: '\t', length: 6 });
    expect(separatorLine('sep=|\n', true)).to.deep.equal({ delimiter: '|', length: 6 });
    // not one: a header that starts so, a longer value, an empty one, a later line, no line break
    for (const text of ['sep;a\n', 'sep=;;\n', 'sep=\n', 'a;b\nsep=;\n', 'sep=;', ' sep=;\n', 'se']) {
      expect(separatorLine(text, true), JSON.stringify(text)).to.equal(null);
    }
    // too short to tell while more may follow; a CR at the end may still be a CR LF
    for (const text of ['', 's', 'SeP', 'sep=', 'sep=;', 'sep=;\r', '\ufeffsep']) {
      expect(separatorLine(text, false), JSON.stringify(text)).to.equal(undefined);
    }
    expect(separatorLine('sep=;\r', true)).to.deep.equal({ delimiter: ';', length: 6 });
    expect(separatorLine('sex', false)).to.equal(null);
  });

  it('names the delimiter at the upload, which refuses a character that is none of comma, semicolon, tab', () => {
    // the lines after it decide nothing but the columns: a comma file whose cells hold semicolons
    expect(sniff(Buffer.from('sep=,\na;x,b;y,c\n1;2,3,4\n'), true, 'x.csv', limits)).to.deep.equal({
      format: 'csv',
      delimiter: ',',
      columns: 3,
      lineEndings: 'crlf-lf-cr',
      encoding: 'utf-8',
      separatorLine: true,
    });
    expect(sniff(Buffer.from('\ufeffsep=;\r\nName;Betrag\r\nA;1,5\r\n'), true, 'x', limits)).to.include({
      delimiter: ';',
      columns: 2,
      separatorLine: true,
    });
    expect(sniff(Buffer.from('sep=\t\na\tb\n1\t2\n'), true, 'x.csv', limits)).to.include({
      format: 'tsv',
      delimiter: '\t',
    });
    // UTF-16 ("Unicode text") and Windows-1252 files carry it too
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('sep=\t\r\na\tb\r\n1\t2\r\n', 'utf16le'),
    ]);
    expect(sniff(utf16, true, 'x.txt', limits)).to.include({ delimiter: '\t', separatorLine: true });
    expect(sniff(Buffer.from('sep=;\nStadt;x\nM\xfcnchen;1\n', 'latin1'), true, 'x', limits)).to.include({
      delimiter: ';',
      encoding: 'windows-1252',
      separatorLine: true,
    });
    // without the line: as before (no separatorLine field)
    expect(sniff(Buffer.from('a;b\n1;2\n'), true, 'x', limits)).to.not.have.property('separatorLine');
    expect(() => sniff(Buffer.from('sep=|\na|b\n1|2\n'), true, 'x', limits)).to.throw(
      /names "\|" as the delimiter \(sep=\|\); accepted are comma, semicolon and tab/,
    );
    expect(() => sniff(Buffer.from('sep=;\na,b\n1,2\n'), true, 'x', limits)).to.throw(
      /names the semicolon as the delimiter/,
    );
    expect(() => sniff(Buffer.from('sep=;\n'), true, 'x', limits)).to.throw(/names the semicolon/);
  });

  it('is no row of the upload: not counted against the limit', async () => {
    const inspect = async (text: string) => {
      const inspector = new UploadInspector('t.csv', { maxRows: 2, maxColumns: 10 });
      await pipeline(Readable.from([Buffer.from(text)]), inspector, async function* (source) {
        for await (const _ of source) void _;
      });
      return inspector;
    };
    expect((await inspect('sep=;\na;b\n1;2\n3;4\n')).dataRows).to.equal(2);
    expect((await inspect('sep=;\na;b\n1;2\n3;4')).dataRows).to.equal(2);
    let status: number | undefined;
    await inspect('sep=;\na;b\n1;2\n3;4\n5;6\n').catch((err) => (status = err.statusCode));
    expect(status).to.equal(400);
  });

  it('is left out of the text every reader takes, cut anywhere; other text passes unchanged', async () => {
    const cases: Array<[string, string]> = [
      ['sep=;\na;b\n1;2\n', 'a;b\n1;2\n'],
      ['sep=;\r\na;b\r\n', 'a;b\r\n'],
      ['sep=;\ra;b\r', 'a;b\r'],
      ['\ufeffsep=,\na,b\n', '\ufeffa,b\n'],
      ['sep=;\n', ''],
      ['a;b\n1;2\n', 'a;b\n1;2\n'],
      ['sep;x\n1;2\n', 'sep;x\n1;2\n'],
      ['sep=;;\n1;2\n', 'sep=;;\n1;2\n'],
      ['se', 'se'],
      ['sep=;', 'sep=;'],
      ['', ''],
    ];
    for (const [input, expected] of cases) {
      for (const chunks of cuts(Buffer.from(input))) {
        const out = await drain(withoutSeparatorLine(Readable.from(chunks.filter((c) => c.length > 0))));
        expect(out.toString('utf8'), `${JSON.stringify(input)} in ${chunks.length} chunks`).to.equal(
          expected,
        );
      }
    }
    // after the conversion from the stored encoding: a UTF-16 file's line goes too
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('sep=\t\r\na\tb\r\n', 'utf16le')]);
    expect((await drain(tableText(Readable.from([utf16]), 'utf-16le'))).toString('utf8')).to.equal(
      'a\tb\r\n',
    );
    // the preview's header is the line after it
    const preview = await previewStream(
      Readable.from([Buffer.from('sep=;\nName;Betrag\nA;1,5\n')]),
      'csv',
      ';',
      { rows: 5, maxColumns: 10, maxCellChars: 100 },
    );
    expect(preview.columns).to.deep.equal(['Name', 'Betrag']);
    expect(preview.rows).to.deep.equal([['A', '1,5']]);
  });
});
