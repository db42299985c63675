import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { downloadChecked, quotedGroupedStart } from '../../domain/reports/engine/csvText';

describe('reports: the download check of a CSV/TSV (pure)', () => {
  let dir: string;
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
    let n = 0;
    for (const [text, expected] of cases) {
      const bytes = Buffer.from(text);
      for (let cut = 1; cut < bytes.length; cut++) {
        const file = path.join(dir, `copy-${n++}.csv`);
        const facts = await downloadChecked(
          Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]),
          file,
          () => undefined,
        );
        expect(facts.groupedNumbers, `${JSON.stringify(text)} cut at ${cut}`).to.equal(expected);
        expect(facts.quoteFree).to.equal(!text.includes('"'));
        expect((await readFile(file)).equals(bytes)).to.equal(true);
      }
    }
  });
});
