import { expect } from 'chai';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UploadInspector } from '../../../domain/files/inspect';
import { previewStream } from '../../../domain/files/preview';
import { separatorLine } from '../../../domain/files/separatorHint';
import { recordsOf, SheetHeaderSample, sniff } from '../../../domain/files/sniff';
import { tableText, withoutLeadingLines } from '../../../domain/files/tableText';

const limits = { maxRows: 1000, maxColumns: 20 };

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

async function inspect(text: string, maxRows = 1000) {
  const inspector = new UploadInspector('t.csv', { maxRows, maxColumns: 20 });
  await pipeline(Readable.from([Buffer.from(text)]), inspector, async function* (source) {
    for await (const _ of source) void _;
  });
  return inspector;
}

/** the text a reader takes from a version with these lines before its header */
async function readerText(text: string, linesBeforeHeader: number): Promise<string> {
  return (await drain(tableText(Readable.from([Buffer.from(text)]), 'utf-8', linesBeforeHeader))).toString();
}

describe('lines before the header: Excel separator line, titles and notes', () => {
  it("finds Excel's separator line: the first line, `sep=` in any case and one character, after an optional BOM", () => {
    expect(separatorLine('sep=;\na;b\n')).to.deep.equal({ delimiter: ';', length: 6 });
    expect(separatorLine('SEP=,\r\na,b')).to.deep.equal({ delimiter: ',', length: 7 });
    expect(separatorLine('\ufeffsep=\t\ra\tb')).to.deep.equal({ delimiter: '\t', length: 6 });
    expect(separatorLine('sep=|\n')).to.deep.equal({ delimiter: '|', length: 6 });
    for (const text of ['sep;a\n', 'sep=;;\n', 'sep=\n', 'a;b\nsep=;\n', 'sep=;', ' sep=;\n', 'se']) {
      expect(separatorLine(text), JSON.stringify(text)).to.equal(null);
    }
  });

  it('the separator line names the delimiter at the upload, which refuses one that is no comma, semicolon or tab', () => {
    // a comma file whose cells hold semicolons: the line decides, the lines after it only count the columns
    expect(sniff(Buffer.from('sep=,\na;x,b;y,c\n1;2,3,4\n'), true, 'x.csv', limits)).to.deep.equal({
      format: 'csv',
      delimiter: ',',
      columns: 3,
      lineEndings: 'crlf-lf-cr',
      encoding: 'utf-8',
      // Excel hides the line: the header is the first row it shows
      linesBeforeHeader: 1,
      headerRow: 1,
    });
    expect(sniff(Buffer.from('\ufeffsep=;\r\nName;Betrag\r\nA;1,5\r\n'), true, 'x', limits)).to.include({
      delimiter: ';',
      columns: 2,
      linesBeforeHeader: 1,
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
    expect(sniff(utf16, true, 'x.txt', limits)).to.include({ delimiter: '\t', linesBeforeHeader: 1 });
    expect(sniff(Buffer.from('sep=;\nStadt;x\nM\xfcnchen;1\n', 'latin1'), true, 'x', limits)).to.include({
      delimiter: ';',
      encoding: 'windows-1252',
      linesBeforeHeader: 1,
    });
    expect(() => sniff(Buffer.from('sep=|\na|b\n1|2\n'), true, 'x', limits)).to.throw(
      /names "\|" as the delimiter \(sep=\|\); accepted are comma, semicolon and tab/,
    );
    expect(() => sniff(Buffer.from('sep=;\na,b\n1,2\n'), true, 'x', limits)).to.throw(
      /names the semicolon as the delimiter/,
    );
    expect(() => sniff(Buffer.from('sep=;\n'), true, 'x', limits)).to.throw(/names the semicolon/);
  });

  it('finds a title or notes above the table: one-field lines, or narrower lines with an empty line before the header', () => {
    const sniffed = (text: string) => sniff(Buffer.from(text), true, 'x.csv', limits);
    // a title line without a delimiter (before: refused, no first record of two fields)
    expect(sniffed('Sales report\nregion,sales,units\nEMEA,1,2\nAPAC,3,4\n')).to.include({
      delimiter: ',',
      columns: 3,
      linesBeforeHeader: 1,
    });
    // a bank statement: notes with semicolons, an empty line, then the table (before: the notes were the header)
    const bank =
      '"Konto";"DE02 1203 0000 0000 2020 51";\n"Zeitraum";"01.01.2026 - 31.01.2026";\n\n' +
      '"Buchungstag";"Valuta";"Text";"Betrag"\n"02.01.2026";"02.01.2026";"Miete";"-800,00"\n' +
      '"03.01.2026";"03.01.2026";"Gehalt";"2.500,00"\n';
    expect(sniffed(bank)).to.include({ delimiter: ';', columns: 4, linesBeforeHeader: 3, headerRow: 4 });
    // blank lines and CR LF and a bare CR all count as lines
    expect(sniffed('Title\r\n\r\nNotes\ra,b\r\n1,2\r\n3,4\r\n')).to.include({ linesBeforeHeader: 3 });
    // a header narrower than its rows with no empty line before them stays the header (ragged rows)
    expect(sniffed('a,b\n1,2,3\n4,5,6\n'))
      .to.deep.include({ columns: 2 })
      .and.not.have.property('linesBeforeHeader');
    // notes as wide as the table are its header; a table already consistent keeps its first line
    expect(sniffed('x,y\n\na,b\n1,2\n')).to.not.have.property('linesBeforeHeader');
    expect(sniffed('a,b,c\n1,2,3\n4,5,6\n')).to.not.have.property('linesBeforeHeader');
    // the rows after a header below notes must be consistent (80% exactly as wide), with at least one row
    expect(() => sniffed('Title\na,b,c\n1,2\n3,4\n5,6,7\n')).to.throw(/no consistent delimiter/);
    expect(sniffed('T,x\n\na,b,c\n1,2\n3,4\n5,6,7\n'))
      .to.include({ columns: 2 })
      .and.not.have.property('linesBeforeHeader');
    expect(() => sniffed('Title\na,b,c\n')).to.throw(/no consistent delimiter/);
    // at most 10 records before the header
    const notes = (n: number) => `${Array.from({ length: n }, (_, i) => `note ${i}`).join('\n')}\na,b\n1,2\n`;
    expect(sniffed(notes(10))).to.include({ linesBeforeHeader: 10 });
    expect(() => sniffed(notes(11))).to.throw(/no consistent delimiter/);
    // with the separator line, lines after it count too
    expect(sniffed('sep=;\nBericht\n\nx;y\n1;2\n')).to.include({
      delimiter: ';',
      linesBeforeHeader: 3,
      headerRow: 3,
    });
    // records are quote-aware; a quoted line break in the notes is one more line to skip
    expect(recordsOf('"a\nb"\n\nx,y\n1,2', ',', true, 10)).to.deep.equal([
      { width: 1, fields: 1, start: 0, afterBlank: false, names: true },
      { width: 2, fields: 2, start: 7, afterBlank: true, names: true },
      { width: 2, fields: 2, start: 11, afterBlank: false, names: false },
    ]);
    // a record's width ends at its last field holding something; a line of delimiters only is a blank line
    expect(recordsOf('T,,\n, "" ,\nx,,y,\n', ',', true, 10)).to.deep.equal([
      { width: 1, fields: 3, start: 0, afterBlank: false, names: true },
      { width: 0, fields: 3, start: 4, afterBlank: false, names: false },
      { width: 3, fields: 4, start: 11, afterBlank: true, names: false },
    ]);
    const names = (text: string) => recordsOf(text, ',', true, 10).map((r) => r.names);
    expect(names('a,"",b\r\n"x ""y""",Q1,2026-01-02\r\n-1.234,5;02.01.2026')).to.deep.equal([
      false,
      false,
      false,
    ]);
    // trailing empty fields are no part of the names
    expect(names('a," b ",c\r\n"x ""y""",Q1,n 2\r\na," b ",""')).to.deep.equal([true, true, true]);
    // a header below notes is names: numbers or dates after an empty line are rows of a ragged table
    expect(sniffed('1,2\n\n3,4,5\n6,7,8\n'))
      .to.include({ columns: 2 })
      .and.not.have.property('linesBeforeHeader');
    expect(sniffed('"a\nb"\n\nx,y\n1,2\n')).to.include({ linesBeforeHeader: 3 });
  });

  it('finds a title or notes padded with delimiters to the width of the table, as spreadsheet programs export them', () => {
    const sniffed = (text: string) => sniff(Buffer.from(text), true, 'x.csv', limits);
    // Excel, LibreOffice and Google Sheets write a title row as `Title;;;;` and a blank row as `;;;;`: every
    // record is as wide, so the first made a consistent table before (the title was the header, the real header
    // a data row)
    expect(
      sniffed('Umsatzbericht 2026;;;\n;;;\nDatum;Kunde;Betrag;Notiz\n02.01.2026;A;1,5;\n03.01.2026;B;2;x\n'),
    ).to.include({ delimiter: ';', columns: 4, linesBeforeHeader: 2, headerRow: 3 });
    // without the blank row below a one-field title; with CR LF and quoted fields
    expect(
      sniffed('"Sales report","",""\r\n"region","sales","units"\r\n"EMEA","1","2"\r\n"APAC","3","4"\r\n'),
    ).to.include({ delimiter: ',', columns: 3, linesBeforeHeader: 1, headerRow: 2 });
    // a bank statement's notes two fields wide, padded, then a blank row: the header after it
    const bank =
      'Konto;DE02 1203 0000 0000 2020 51;;\nZeitraum;01.01.2026 - 31.01.2026;;\n;;;\n' +
      'Buchungstag;Valuta;Text;Betrag\n02.01.2026;02.01.2026;Miete;-800,00\n03.01.2026;03.01.2026;Gehalt;2.500,00\n';
    expect(sniffed(bank)).to.include({ delimiter: ';', columns: 4, linesBeforeHeader: 3, headerRow: 4 });
    // the used range wider than the table: the header's trailing empty fields are columns with generated names
    expect(sniffed('Bericht,,,\nname,city,,\nAnna,Berlin,,\nBob,Hamburg,,x\n')).to.include({
      columns: 4,
      linesBeforeHeader: 1,
    });
    // with Excel's separator line too
    expect(sniffed('sep=;\nBericht;;\n;;\na;b;c\n1;2;3\n')).to.include({
      linesBeforeHeader: 3,
      headerRow: 3,
    });
    // a header with a trailing empty name and rows of text stays the header: no row is wider than every one
    // above it after a blank row
    expect(sniffed('Name;Stadt;\nAnna;Berlin;x\n;;\nBob;Hamburg;y\n')).to.not.have.property(
      'linesBeforeHeader',
    );
    // two-field notes with no blank row before the table, or notes as wide as it, stay the header
    expect(sniffed('Konto;DE02;\nName;Stadt;Land\nAnna;Berlin;DE\n')).to.not.have.property(
      'linesBeforeHeader',
    );
    expect(sniffed('x;y;\n;;\na;b;\n1;2;\n')).to.not.have.property('linesBeforeHeader');
    // a table whose first row is a header with empty cells stays as it is
    expect(sniffed('id;;name\n1;;a\n2;;b\n')).to.not.have.property('linesBeforeHeader');
    // the rows below the header must make the table (80% as wide as it)
    expect(sniffed('Bericht;;\nx;y;z\n1;2\n3;4\n5\n')).to.not.have.property('linesBeforeHeader');
  });

  it("finds a worksheet's header below a title or notes by the same rule, with rows as wide as their last cell", () => {
    // the header's index among rows of these widths, fed as the loader and the preview feed them: '-' a row
    // holding nothing, '+' a row missing from the sheet, '#<width>' a row that is not all text (a number in it)
    const header = (widths: Array<number | string>) => {
      const sample = new SheetHeaderSample<null>();
      let number = 0;
      for (const w of widths) {
        number++;
        if (w === '-') sample.blank();
        else if (w !== '+') {
          const names = typeof w === 'number';
          sample.add(number, Number(names ? w : String(w).slice(1)), names, null);
        }
      }
      return sample.headerIndex();
    };
    // a header and its rows, some leaving trailing cells empty: the first row
    expect(header([3, 3, 2, 3, 1])).to.equal(0);
    expect(header([3])).to.equal(0);
    // a title (one cell), with or without a blank row, then the table
    expect(header([1, 3, 3, 3])).to.equal(1);
    expect(header([1, 1, '-', 4, 4, 3])).to.equal(2);
    // notes two cells wide need a blank row before the table
    expect(header([2, 2, '-', 5, 5])).to.equal(2);
    expect(header([2, 5, 5])).to.equal(0);
    // a row missing from the sheet is a blank row too
    expect(header([2, 2, '+', 5, 5])).to.equal(2);
    // a header narrower than its rows stays the header; so does a table after more than 10 rows of notes
    expect(header([2, 3, 3, 3])).to.equal(0);
    const table = Array(40).fill(2);
    expect(header([...Array(10).fill(1), ...table])).to.equal(10);
    expect(header([...Array(11).fill(1), ...table])).to.equal(0);
    // a header below notes is names: a row with a number or an empty cell is none (a ragged sheet stays as it is)
    expect(header([1, '#3', 3, 3])).to.equal(0);
    expect(header([2, 1, 2, '-', '#4', 3, 2, 1])).to.equal(0);
    // the rows after it must be at most as wide (80%), one at least
    expect(header([1, 2, 3, 3, 3])).to.equal(0);
    expect(header([1, 3])).to.equal(0);
  });

  it('are no rows of the upload: not counted, nor against the limit', async () => {
    expect((await inspect('sep=;\na;b\n1;2\n3;4\n', 2)).dataRows).to.equal(2);
    expect((await inspect('Title\n\na,b\n1,2\n3,4', 2)).dataRows).to.equal(2);
    let status: number | undefined;
    await inspect('sep=;\na;b\n1;2\n3;4\n5;6\n', 2).catch((err) => (status = err.statusCode));
    expect(status).to.equal(400);
  });

  it('are left out of the text every reader takes, cut anywhere; a version without them reads as it is', async () => {
    const cases: Array<[string, number, string]> = [
      ['sep=;\na;b\n1;2\n', 1, 'a;b\n1;2\n'],
      ['sep=;\r\na;b\r\n', 1, 'a;b\r\n'],
      ['sep=;\ra;b\r', 1, 'a;b\r'],
      ['\ufeffsep=,\na,b\n', 1, 'a,b\n'],
      ['T\r\n\r\nN\ra,b\r\n', 3, 'a,b\r\n'],
      ['T\n\r\n\ra,b', 3, 'a,b'],
      ['T\n', 1, ''],
      ['T\r', 1, ''],
      ['a;b\n1;2\n', 0, 'a;b\n1;2\n'],
    ];
    for (const [input, lines, expected] of cases) {
      for (const chunks of cuts(Buffer.from(input))) {
        const stream = withoutLeadingLines(Readable.from(chunks.filter((c) => c.length > 0)), lines);
        expect(
          (await drain(stream)).toString('utf8'),
          `${JSON.stringify(input)} in ${chunks.length}`,
        ).to.equal(expected);
      }
    }
    expect(await readerText('a,b\n', 0)).to.equal('a,b\n');
    // after the conversion from the stored encoding: a UTF-16 file's line goes too
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('sep=\t\r\na\tb\r\n', 'utf16le')]);
    expect((await drain(tableText(Readable.from([utf16]), 'utf-16le', 1))).toString('utf8')).to.equal(
      'a\tb\r\n',
    );
    // the preview's header is the line after them
    const preview = await previewStream(
      Readable.from([Buffer.from('sep=;\nName;Betrag\nA;1,5\n')]),
      'csv',
      ';',
      { rows: 5, maxColumns: 10, maxCellChars: 100 },
      'utf-8',
      1,
    );
    expect(preview.columns).to.deep.equal(['Name', 'Betrag']);
    expect(preview.rows).to.deep.equal([['A', '1,5']]);
  });
});
