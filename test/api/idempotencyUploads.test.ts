import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { routes } from '../../api/routes';
import { call, expectErrorBody } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { footprint, uploadFile, uploadTo } from '../helpers/files';

const KEY_MESSAGE = 'Idempotency-Key must be 1 to 255 visible ASCII characters';
const DIFFERENT = 'Idempotency-Key was already used for a different request';

describe('Idempotency-Key: uploads are fingerprinted by content, and the header is checked everywhere', function () {
  this.timeout(60_000);

  it('the same key with another content of the same length, another name or visibility gives 422 and keeps nothing', async () => {
    const a = await createTeam({ plan: 'premium' });
    const headers = { 'Idempotency-Key': randomUUID() };
    const content = 'a,b\n1,2\n3,4\n';
    const sameLength = 'a,b\n1,2\n3,5\n';
    const first = await uploadFile(content, { token: a.adminToken, name: 'one.csv', headers });
    expect(first.status, first.text).to.equal(201);
    const before = await footprint(a.company.id);

    for (const [data, name, visibility] of [
      [sameLength, 'one.csv', undefined],
      [content, 'two.csv', undefined],
      [content, 'one.csv', 'company'],
    ] as const) {
      const again = await uploadFile(data, { token: a.adminToken, name, visibility, headers });
      expect(expectErrorBody(again, 422).message).to.equal(DIFFERENT);
      expect(again.headers.get('idempotent-replayed')).to.equal(null);
    }
    // a new version of the file under the same key is another request too
    const version = await uploadTo(`/files/${first.body.id}/versions`, content, {
      token: a.adminToken,
      name: 'one.csv',
      headers,
    });
    expectErrorBody(version, 422);
    expect(await footprint(a.company.id)).to.deep.equal(before);

    // the same form (with a new multipart boundary) replays the first answer
    const replay = await uploadFile(content, { token: a.adminToken, name: 'one.csv', headers });
    expect(replay.status).to.equal(201);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(replay.body).to.deep.equal(first.body);
    expect(await footprint(a.company.id)).to.deep.equal(before);
  });

  it('a form without a boundary, or cut short, gives 400 both when uploaded and when retried under a used key', async () => {
    const a = await createTeam({ plan: 'premium' });
    const key = randomUUID();
    const broken: Array<[string, string, string]> = [
      ['multipart/form-data', 'a,b\n', 'the multipart body has no boundary'],
      [
        'multipart/form-data; boundary=xyz',
        '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\na,b\n',
        'the multipart body is malformed',
      ],
      [
        'multipart/form-data; boundary=xyz',
        '--xyz\r\nContent-Disposition: form-data; name="other"; filename="a.csv"\r\n\r\na,b\n',
        'the multipart body is malformed',
      ],
    ];
    const send = (type: string, raw: string, headers: Record<string, string> = {}) =>
      call('POST', '/files', { token: a.adminToken, raw, headers: { 'content-type': type, ...headers } });
    // the upload reads the form
    for (const [type, raw, message] of broken) {
      expect(expectErrorBody(await send(type, raw), 400).message, type).to.equal(message);
    }
    // a retry under a used key reads it only to fingerprint it
    const first = await uploadFile('a,b\n1,2\n', {
      token: a.adminToken,
      headers: { 'Idempotency-Key': key },
    });
    expect(first.status, first.text).to.equal(201);
    const before = await footprint(a.company.id);
    for (const [type, raw, message] of broken) {
      const again = await send(type, raw, { 'Idempotency-Key': key });
      expect(expectErrorBody(again, 400).message, `retried, ${type}`).to.equal(message);
    }
    expect(await footprint(a.company.id)).to.deep.equal(before);
  });

  it('a new version: the same key replays only for the same content', async () => {
    const a = await createTeam({ plan: 'premium' });
    const file = await uploadFile('a,b\n1,2\n', { token: a.adminToken });
    const headers = { 'Idempotency-Key': randomUUID() };
    const path = `/files/${file.body.id}/versions`;
    const v2 = await uploadTo(path, 'a,b\n1,3\n', { token: a.adminToken, headers });
    expect(v2.status, v2.text).to.equal(201);
    const before = await footprint(a.company.id);
    expectErrorBody(await uploadTo(path, 'a,b\n1,4\n', { token: a.adminToken, headers }), 422);
    const replay = await uploadTo(path, 'a,b\n1,3\n', { token: a.adminToken, headers });
    expect(replay.status).to.equal(201);
    expect(replay.body).to.deep.equal(v2.body);
    expect(await footprint(a.company.id)).to.deep.equal(before);
  });

  it('an empty, over-long or invalid key gives 400 with the error body on every route that honours it', async () => {
    const team = await createTeam({ plan: 'premium' });
    const honouring = routes.filter((r) => r.idempotent);
    expect(honouring.length).to.be.at.least(5);
    for (const spec of honouring) {
      const path = spec.path.replace(/:\w+/g, randomUUID());
      for (const key of ['', 'x'.repeat(256), 'has space', 'tab\there', 'é']) {
        const res = await call(spec.method.toUpperCase(), path, {
          token: spec.access.public ? undefined : team.adminToken,
          json: {},
          headers: { 'Idempotency-Key': key },
        });
        const what = `${spec.method} ${spec.path} with ${JSON.stringify(key)}`;
        expect(res.status, `${what}: ${res.text}`).to.equal(400);
        expect(expectErrorBody(res, 400).message, what).to.equal(KEY_MESSAGE);
      }
    }
  });
});
