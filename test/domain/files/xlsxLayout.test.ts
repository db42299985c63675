import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import {
  inspectStoredXlsx,
  directoryStart,
  ObjectRangeReader,
  openZip,
  readEntries,
  type XlsxLimits,
} from '../../../domain/files/xlsx';
import { checkLocalEntries } from '../../../domain/files/zipLayout';
import { testEnv } from '../../helpers/env';
import { CONTENT_TYPES_XML, sheetXml, WORKBOOK_XML, zip, type ZipEntry } from '../../helpers/files';

const limits: XlsxLimits = {
  maxUnpackedBytes: 400 * 1024 * 1024,
  maxEntries: 1000,
  maxCompressionRatio: 100,
  maxRows: 1_048_576,
  maxColumns: 1024,
  maxSharedStringsBytes: 64 * 1024 * 1024,
  maxSharedStrings: 1_000_000,
};

const WORKBOOK: ZipEntry[] = [
  { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
  { name: 'xl/workbook.xml', data: WORKBOOK_XML },
  { name: 'xl/worksheets/sheet1.xml', data: sheetXml('A1:A1', '<row r="1"><c r="A1"><v>1</v></c></row>') },
];
const STRINGS: ZipEntry = { name: 'xl/sharedStrings.xml', data: '<sst><si><t>x</t></si></sst>' };

let stored = 0;
async function store(data: Buffer): Promise<{ key: string; size: number }> {
  const { storage } = testEnv();
  const key = storage.key('unit-xlsx-layout', `${++stored}.xlsx`);
  await storage.client.putObject(storage.bucket, key, data, data.length);
  return { key, size: data.length };
}

async function inspect(data: Buffer): Promise<string> {
  const { storage } = testEnv();
  const { key, size } = await store(data);
  try {
    await inspectStoredXlsx(storage.client, storage.bucket, key, size, limits);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
}

describe("XLSX zip layout: the local entries are exactly the directory's (real MinIO)", function () {
  this.timeout(30_000);

  it('refuses an entry missing from the directory before the first, between two, or after the last', async () => {
    for (const [at, data] of [
      ['first', zip([{ ...STRINGS, hidden: true }, ...WORKBOOK])],
      ['between', zip([WORKBOOK[0], { ...STRINGS, hidden: true }, ...WORKBOOK.slice(1)])],
      ['last', zip([...WORKBOOK, { ...STRINGS, hidden: true }])],
    ] as const) {
      expect(await inspect(data), at).to.match(
        /^the workbook's zip is refused: bytes \d+–\d+ are in no entry of its directory$/,
      );
    }
  });

  it('refuses a local header whose compression method or zip64 size differs from the directory', async () => {
    expect(await inspect(zip([...WORKBOOK, { ...STRINGS, store: true, local: { method: 8 } }]))).to.equal(
      "the workbook's zip is refused: the local header of xl/sharedStrings.xml has another compression method",
    );
    expect(
      await inspect(zip([...WORKBOOK, { ...STRINGS, local: { zip64: true, compressedSize: 3 } }])),
    ).to.equal(
      "the workbook's zip is refused: the local header of xl/sharedStrings.xml gives another compressed size",
    );
    // zip64 sizes that agree are fine
    expect(await inspect(zip([...WORKBOOK, { ...STRINGS, local: { zip64: true } }]))).to.equal('accepted');
  });

  it('refuses a streamed entry whose data holds a data-descriptor signature before its end', async () => {
    const early = {
      name: 'docProps/app.xml',
      data: 'text PK\x07\x08 more text',
      store: true,
      descriptor: true,
    };
    expect(await inspect(zip([...WORKBOOK, early]))).to.equal(
      "the workbook's zip is refused: the data of docProps/app.xml does not end at its data descriptor where its directory says (a streaming reader could not read it)",
    );
    const fine = { ...early, data: 'text PK\x07 more text' };
    expect(await inspect(zip([...WORKBOOK, fine]))).to.equal('accepted');
  });

  it('reads the local headers of a workbook larger than the tail in a few ranged reads', async () => {
    const { storage } = testEnv();
    // a worksheet of ~700 KB packed puts the parts before it outside the 256 KB tail, those after it inside
    const cells = Array.from(
      { length: 20_000 },
      (_, i) =>
        `<row r="${i + 1}"><c r="A${i + 1}" t="inlineStr"><is><t>${randomBytes(24).toString('hex')}</t></is></c></row>`,
    ).join('');
    const small = (name: string) => ({ name, data: `<x>${name}</x>` });
    const data = zip([
      ...WORKBOOK.slice(0, 2),
      ...['a', 'b', 'c'].map((n) => small(`docProps/${n}.xml`)),
      { name: 'xl/worksheets/sheet1.xml', data: sheetXml('A1:A20000', cells) },
      ...['d', 'e', 'f'].map((n) => small(`docProps/${n}.xml`)),
    ]);
    expect(data.length).to.be.greaterThan(512 * 1024);
    const { key, size } = await store(data);
    const reader = new ObjectRangeReader(storage.client, storage.bucket, key, size);
    await reader.loadTail();
    const zipFile = await openZip(reader, size);
    try {
      const directoryAt = directoryStart(zipFile);
      const entries = await readEntries(zipFile, 1000);
      expect(entries).to.have.lengthOf(9);
      await checkLocalEntries(reader, entries, directoryAt);
      // one window for the headers before the worksheet (and its own); the rest is in the tail
      expect(reader.reads).to.equal(1);
      expect(await inspectStoredXlsx(storage.client, storage.bucket, key, size, limits)).to.include({
        rows: 19_999,
      });
    } finally {
      zipFile.close();
    }
  });
});
