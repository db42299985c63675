import { expect } from 'chai';
import { call } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { uploadFile } from '../helpers/files';

describe('files: line endings and the recorded dialect', function () {
  this.timeout(60_000);

  for (const [name, text] of [
    ['bare \\r', 'a,b\r1,2\r3,4\r'],
    ['\\n mixed with bare \\r', 'a,b\n1,2\r3,4\n'],
    ['\\r\\n mixed with bare \\r, no final break', 'a,b\r\n1,2\r3,4'],
  ]) {
    it(`a CSV with ${name} line breaks: 2 rows × 2 columns stored, previewed the same, dialect recorded`, async () => {
      const a = await createTeam({ plan: 'premium' });
      const up = await uploadFile(text, { token: a.adminToken, name: 'cr.csv' });
      expect(up.status, up.text).to.equal(201);
      expect(up.body.version).to.include({ rowCount: 2, columnCount: 2, format: 'csv' });
      const preview = await call('GET', `/files/${up.body.id}/versions/1/preview`, { token: a.adminToken });
      expect(preview.status, preview.text).to.equal(200);
      expect(preview.body.columns).to.deep.equal(['a', 'b']);
      expect(preview.body.rows).to.deep.equal([
        ['1', '2'],
        ['3', '4'],
      ]);
      const row = await testEnv().knex('fileVersions').where({ fileId: up.body.id }).first();
      expect(row).to.include({ delimiter: ',', lineEndings: 'crlf-lf-cr' });
    });
  }
});
