/**
 * A stored CSV that its preview cannot read (a quote never closed, a record over the parser's 1 MiB) answers
 * 422 with the error body, naming the problem, never a cell's text; never a 500. Both were accepted at upload:
 * the sniffer judges complete records of the first 64 KB only.
 */
import { expect } from 'chai';
import { createTeam } from '../helpers/factories';
import { call, expectErrorBody } from '../helpers/http';
import { uploadFile } from '../helpers/files';

const SECRET = 'cell-text-not-for-errors';

describe('files: a CSV that cannot be previewed answers 422', function () {
  this.timeout(60_000);

  it('a quote never closed, a record over 1 MiB: 422 naming the problem, never the cells', async () => {
    const a = await createTeam({ plan: 'premium' });
    const cases: Array<[string, string, RegExp]> = [
      [
        'a quote never closed',
        `a,b\n"${SECRET},1\n`,
        /^the file cannot be read: a quoted cell is never closed \(the file ends inside it\)$/,
      ],
      [
        'a record over 1 MiB',
        `a,b\n${SECRET}${'x'.repeat(1_100_000)},1\n`,
        /^the file cannot be read: a record is larger than 1 MiB \(line \d+\)$/,
      ],
    ];
    for (const [what, content, expected] of cases) {
      const up = await uploadFile(content, { token: a.adminToken, name: 'broken.csv' });
      expect(up.status, `${what}: ${up.text}`).to.equal(201);
      const res = await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: a.adminToken });
      const message = String(expectErrorBody(res, 422).message);
      expect(message, what).to.match(expected);
      expect(message).not.to.include(SECRET);
    }
  });
});
