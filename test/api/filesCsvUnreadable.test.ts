/**
 * A stored CSV that its preview cannot read (a quote never closed, a record over the parser's 1 MiB) answers
 * 422 with the error body, naming the problem, never a cell's text; never a 500. Both were accepted at upload:
 * the sniffer judges complete records of the first 64 KB only.
 */
import { expect } from 'chai';
import { createTeam } from '../helpers/factories';
import { call, expectErrorBody } from '../helpers/http';
import { uploadFile, uploadTo } from '../helpers/files';

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
    // a comparison naming key columns reads both headers the same way: 422 naming the version
    const broken = await uploadFile(`a,b\n"${SECRET},1\n`, { token: a.adminToken, name: 'v.csv' });
    const next = await uploadTo(`/files/${broken.body.id}/versions`, 'a,b\n1,2\n', {
      token: a.adminToken,
      name: 'v.csv',
    });
    expect(next.status, next.text).to.equal(201);
    const compared = await call('POST', '/comparisons', {
      token: a.adminToken,
      json: {
        base: { fileId: broken.body.id, version: 1 },
        target: { fileId: broken.body.id, version: 2 },
        keyColumns: ['a'],
      },
    });
    expect(String(expectErrorBody(compared, 422).message)).to.equal(
      'the base version (1): the file cannot be read: a quoted cell is never closed (the file ends inside it)',
    );
  });
});
