import { expect } from 'chai';
import { inspectStoredXlsx } from '../../../domain/files/xlsx';
import { LocalEntryWalk } from '../../../domain/files/zipLayout';
import { testEnv } from '../../helpers/env';
import {
  CONTENT_TYPES_XML,
  sheetXml,
  WORKBOOK_XML,
  xlsx,
  zip,
  type ZipEntry,
  storeObject,
  XLSX_TEST_LIMITS,
} from '../../helpers/files';

const limits = XLSX_TEST_LIMITS;

const WORKBOOK: ZipEntry[] = [
  { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
  { name: 'xl/workbook.xml', data: WORKBOOK_XML },
  { name: 'xl/worksheets/sheet1.xml', data: sheetXml('A1:A1', '<row r="1"><c r="A1"><v>1</v></c></row>') },
];
const STRINGS: ZipEntry = { name: 'xl/sharedStrings.xml', data: '<sst><si><t>x</t></si></sst>' };

let stored = 0;
const store = (data: Buffer) => storeObject('unit-xlsx-layout', `${++stored}.xlsx`, data);

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
        /^the workbook's zip is refused: the local entry xl\/sharedStrings\.xml at byte \d+ is not in its directory$/,
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

  it('walks the same entries whatever the chunks the bytes arrive in (signatures cut between chunks)', async () => {
    const workbooks = {
      exceljs: await xlsx(30, 3),
      streamed: zip(WORKBOOK.map((e) => ({ ...e, descriptor: true }))),
      'stored and streamed': zip(WORKBOOK.map((e) => ({ ...e, descriptor: true, store: true }))),
      zip64: zip(WORKBOOK.map((e) => ({ ...e, local: { zip64: true } }))),
      hidden: zip([WORKBOOK[0], { ...STRINGS, hidden: true }, ...WORKBOOK.slice(1)]),
      'descriptor in data': zip([
        ...WORKBOOK,
        { name: 'a.xml', data: 'x PK\x07\x08 y', store: true, descriptor: true },
      ]),
    };
    for (const [what, data] of Object.entries(workbooks)) {
      const walked = (size: () => number) => {
        const walk = new LocalEntryWalk(1000);
        for (let at = 0, n = size(); at < data.length && !walk.done; at += n, n = size()) {
          walk.feed(data.subarray(at, at + n));
        }
        walk.end();
        return { entries: walk.entries, directoryAt: walk.directoryAt, failure: walk.failure };
      };
      const whole = walked(() => data.length);
      expect(whole.entries.length, what).to.be.at.least(3);
      for (const size of [1, 2, 3, 4, 5, 7, 4093]) {
        expect(
          walked(() => size),
          `${what} in ${size}-byte chunks`,
        ).to.deep.equal(whole);
      }
      // chunks of random sizes (a fixed sequence: reproducible)
      let seed = 7;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 40;
      for (let round = 0; round < 20; round++) {
        expect(
          walked(() => 1 + random()),
          `${what}, random chunks`,
        ).to.deep.equal(whole);
      }
    }
  });

  it('a walk keeps at most the entry limit, and a zip cut before its directory fails', () => {
    const many = zip(Array.from({ length: 20 }, (_, i) => ({ name: `p${i}.xml`, data: 'x' })));
    const walk = new LocalEntryWalk(5);
    walk.feed(many);
    walk.end();
    expect(walk.entries).to.have.lengthOf(5);
    expect(walk.failure).to.equal('it has more than 5 local entries');
    const cut = new LocalEntryWalk(1000);
    cut.feed(many.subarray(0, 100));
    cut.end();
    expect(cut.failure).to.equal('the zip ends before its directory');
  });
});
