import { expect } from 'chai';
import { call, expectErrorBody } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { createApiKey, createPerson, createTeam, tokenFor } from '../helpers/factories';
import {
  csv,
  expectHiddenFrom,
  footprint,
  multipart,
  objectsOf,
  uploadFile,
  uploadTo,
  xlsx,
} from '../helpers/files';

describe('files: upload, list, visibility, versions, delete', function () {
  this.timeout(60_000);

  it('uploads a CSV (201), lists it with id and originalName, and a second company sees nothing', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const res = await uploadFile(csv(5), { token: a.adminToken, name: 'sales.csv', visibility: 'company' });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ originalName: 'sales.csv', visibility: 'company', currentVersion: 1 });
    expect(res.body.uploadedBy).to.equal(a.admin.id);
    expect(res.body.version).to.include({ version: 1, format: 'csv', rowCount: 5, columnCount: 3 });
    expect(res.body.version.datasetId).to.equal(res.body.datasetId);
    expect(res.headers.get('location')).to.equal(`/files/${res.body.id}`);

    const list = await call('GET', '/files', { token: a.employeeToken });
    expect(list.status).to.equal(200);
    expect(list.body.data.map((f: any) => [f.id, f.originalName])).to.deep.equal([
      [res.body.id, 'sales.csv'],
    ]);
    expect(list.body.meta).to.deep.equal({ nextCursor: null, hasMore: false });

    const other = await call('GET', '/files', { token: b.adminToken });
    expect(other.body.data).to.deep.equal([]);
    for (const path of [
      `/files/${res.body.id}`,
      `/files/${res.body.id}/versions`,
      `/files/${res.body.id}/versions/1`,
      `/files/${res.body.id}/versions/1/preview`,
      `/files/${res.body.id}/versions/1/download-link`,
    ]) {
      const seen = await call('GET', path, { token: b.adminToken });
      expectErrorBody(seen, 404);
    }
    const missing = await call('GET', `/files/${'0'.repeat(8)}-0000-7000-8000-${'0'.repeat(12)}`, {
      token: b.adminToken,
    });
    expect(expectErrorBody(missing, 404).message).to.equal(
      expectErrorBody(await call('GET', `/files/${res.body.id}`, { token: b.adminToken }), 404).message,
    );
    // another tenant can neither add a version, nor change, nor delete it
    expectErrorBody(await uploadTo(`/files/${res.body.id}/versions`, csv(2), { token: b.adminToken }), 404);
    expectErrorBody(
      await call('PATCH', `/files/${res.body.id}`, { token: b.adminToken, json: { visibility: 'private' } }),
      404,
    );
    expectErrorBody(await call('DELETE', `/files/${res.body.id}`, { token: b.adminToken }), 404);
  });

  it('private files: the uploader and admins see them, other employees get 404 until made company-wide', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const res = await uploadFile(csv(3), { token: a.employeeToken, name: 'mine.csv' });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.visibility).to.equal('private');
    const id = res.body.id as string;

    // a second employee of the same company
    const colleague = await createPerson(a.company, { role: 'employee' });
    const colleagueToken = await tokenFor(colleague);

    expect((await call('GET', '/files', { token: colleagueToken })).body.data).to.deep.equal([]);
    expectErrorBody(await call('GET', `/files/${id}`, { token: colleagueToken }), 404);
    expectErrorBody(await call('GET', `/files/${id}/versions/1/preview`, { token: colleagueToken }), 404);
    expectErrorBody(await uploadTo(`/files/${id}/versions`, csv(2), { token: colleagueToken }), 404);
    expect((await call('GET', `/files/${id}`, { token: a.employeeToken })).status).to.equal(200);
    expect((await call('GET', `/files/${id}`, { token: a.adminToken })).status).to.equal(200);
    expect((await call('GET', '/files', { token: a.adminToken })).body.data).to.have.lengthOf(1);

    // only the uploader or an admin changes visibility; the colleague cannot even see it
    expectErrorBody(
      await call('PATCH', `/files/${id}`, { token: colleagueToken, json: { visibility: 'company' } }),
      404,
    );
    const changed = await call('PATCH', `/files/${id}`, {
      token: a.employeeToken,
      json: { visibility: 'company' },
    });
    expect(changed.status, changed.text).to.equal(200);
    expect(changed.body.visibility).to.equal('company');
    expect((await call('GET', `/files/${id}`, { token: colleagueToken })).status).to.equal(200);
    // now visible, but still not the colleague's to change or delete
    expectErrorBody(
      await call('PATCH', `/files/${id}`, { token: colleagueToken, json: { visibility: 'private' } }),
      403,
    );
    expectErrorBody(await call('DELETE', `/files/${id}`, { token: colleagueToken }), 403);
    // a colleague who sees it may add a version
    expect((await uploadTo(`/files/${id}/versions`, csv(2), { token: colleagueToken })).status).to.equal(201);
    // the second company never sees it
    expectErrorBody(await call('GET', `/files/${id}`, { token: b.adminToken }), 404);
    // bad body
    const bad = await call('PATCH', `/files/${id}`, { token: a.adminToken, json: { visibility: 'world' } });
    expect(expectErrorBody(bad, 400).message).to.equal('body.visibility must be one of private, company');
    const audit = await testEnv().knex('auditLog').where({ resourceId: id }).orderBy('createdAt');
    expect(audit.map((r: any) => r.action)).to.include.members([
      'file.uploaded',
      'file.visibility_changed',
      'file.version_uploaded',
    ]);
  });

  it('cursor list: newest first, limit and nextCursor; bad cursor and unknown parameters give 400', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await uploadFile(csv(1), { token: a.adminToken, name: `f${i}.csv` });
      ids.push(res.body.id);
    }
    await uploadFile(csv(1), { token: b.adminToken, name: 'theirs.csv' });
    const first = await call('GET', '/files?limit=2', { token: a.adminToken });
    expect(first.body.data.map((f: any) => f.originalName)).to.deep.equal(['f2.csv', 'f1.csv']);
    expect(first.body.meta.hasMore).to.equal(true);
    const second = await call(
      'GET',
      `/files?limit=2&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`,
      {
        token: a.adminToken,
      },
    );
    expect(second.body.data.map((f: any) => f.originalName)).to.deep.equal(['f0.csv']);
    expect(second.body.meta).to.deep.equal({ nextCursor: null, hasMore: false });
    expectErrorBody(await call('GET', '/files?cursor=nonsense', { token: a.adminToken }), 400);
    expect(
      expectErrorBody(await call('GET', '/files?page=2', { token: a.adminToken }), 400).message,
    ).to.equal('unknown query parameter "page"');
    expectErrorBody(await call('GET', '/files?limit=101', { token: a.adminToken }), 400);
  });

  it('new versions: 2, 3 …; page-number list newest first; each version keeps its own name and format', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const first = await uploadFile(csv(2), { token: a.adminToken, name: 'data.csv' });
    const id = first.body.id as string;
    const v2 = await uploadTo(`/files/${id}/versions`, csv(4, 4), {
      token: a.adminToken,
      name: 'data-v2.csv',
    });
    expect(v2.status, v2.text).to.equal(201);
    expect(v2.body).to.include({
      version: 2,
      fileId: id,
      originalName: 'data-v2.csv',
      rowCount: 4,
      columnCount: 4,
    });
    expect(v2.body.datasetId).to.equal(first.body.datasetId);
    const v3 = await uploadTo(`/files/${id}/versions`, await xlsx(3), {
      token: a.adminToken,
      name: 'data.xlsx',
    });
    expect(v3.status, v3.text).to.equal(201);
    expect(v3.body).to.include({ version: 3, format: 'xlsx', rowCount: 3, columnCount: 3 });

    const file = await call('GET', `/files/${id}`, { token: a.adminToken });
    expect(file.body.currentVersion).to.equal(3);
    const page1 = await call('GET', `/files/${id}/versions?limit=2`, { token: a.adminToken });
    expect(page1.status).to.equal(200);
    expect(page1.body.data.map((v: any) => v.version)).to.deep.equal([3, 2]);
    expect(page1.body.meta).to.deep.equal({ page: 1, limit: 2, total: 3, totalPages: 2 });
    const page2 = await call('GET', `/files/${id}/versions?limit=2&page=2`, { token: a.adminToken });
    expect(page2.body.data.map((v: any) => v.version)).to.deep.equal([1]);
    expectErrorBody(await call('GET', `/files/${id}/versions?cursor=x`, { token: a.adminToken }), 400);
    const one = await call('GET', `/files/${id}/versions/2`, { token: a.adminToken });
    expect(one.body).to.include({ version: 2, originalName: 'data-v2.csv' });
    expectErrorBody(await call('GET', `/files/${id}/versions/9`, { token: a.adminToken }), 404);
    expectErrorBody(await call('GET', `/files/${id}/versions`, { token: b.adminToken }), 404);
    // a visibility field is not part of a version upload
    const extra = await uploadTo(`/files/${id}/versions`, csv(1), {
      token: a.adminToken,
      visibility: 'company',
    });
    expect(expectErrorBody(extra, 400).message).to.equal('form: unknown field "visibility"');
  });

  it('parallel new versions of one file get distinct numbers (the file row is locked)', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const first = await uploadFile(csv(1), { token: a.adminToken });
    const results = await Promise.all(
      [0, 1, 2].map((i) =>
        uploadTo(`/files/${first.body.id}/versions`, csv(50, 3, `v${i}`), { token: a.adminToken }),
      ),
    );
    expect(results.map((r) => r.status)).to.deep.equal([201, 201, 201]);
    expect(results.map((r) => r.body.version).sort()).to.deep.equal([2, 3, 4]);
    await expectHiddenFrom(b.adminToken, [first.body.id]);
    expect(
      (await call('GET', `/files/${first.body.id}`, { token: a.adminToken })).body.currentVersion,
    ).to.equal(4);
  });

  it('Idempotency-Key: a retried upload gets the first answer and creates nothing more; another body gets 422', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const headers = { 'Idempotency-Key': 'upload-1' };
    const first = await uploadFile(csv(3), { token: a.adminToken, name: 'once.csv', headers });
    expect(first.status, first.text).to.equal(201);
    const retry = await uploadFile(csv(3), { token: a.adminToken, name: 'once.csv', headers });
    expect(retry.status).to.equal(201);
    expect(retry.body).to.deep.equal(first.body);
    expect((await footprint(a.company.id)).files).to.equal(1);
    const other = await uploadFile(csv(30), { token: a.adminToken, name: 'once.csv', headers });
    expectErrorBody(other, 422);
    const version = await uploadTo(`/files/${first.body.id}/versions`, csv(2), {
      token: a.adminToken,
      headers,
    });
    expectErrorBody(version, 422);
    expect(await footprint(a.company.id)).to.include({ files: 1, versions: 1, filesUsed: 1 });
    // the same key in another company is another key
    const theirs = await uploadFile(csv(3), { token: b.adminToken, name: 'once.csv', headers });
    expect(theirs.status).to.equal(201);
    expect(theirs.body.id).not.to.equal(first.body.id);
    await expectHiddenFrom(b.adminToken, [first.body.id]);
  });

  it('file.uploaded is in the outbox with fileId, datasetId and version, for the file and each new version', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const first = await uploadFile(csv(1), { token: a.adminToken });
    await uploadTo(`/files/${first.body.id}/versions`, csv(1), { token: a.adminToken });
    const events = await testEnv()
      .knex('outbox')
      .where({ companyId: a.company.id, type: 'file.uploaded' })
      .orderByRaw("(data->>'version')::int");
    expect(events.map((e: any) => e.data)).to.deep.equal([
      { fileId: first.body.id, datasetId: first.body.datasetId, version: 1 },
      { fileId: first.body.id, datasetId: first.body.datasetId, version: 2 },
    ]);
    expect(await testEnv().knex('outbox').where({ companyId: b.company.id })).to.deep.equal([]);
    await expectHiddenFrom(b.adminToken, [first.body.id]);
  });

  it('delete: versions, objects and rows go; later reads give 404; another tenant cannot delete', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const first = await uploadFile(csv(2), { token: a.employeeToken, visibility: 'company' });
    const id = first.body.id as string;
    await uploadTo(`/files/${id}/versions`, csv(3), { token: a.employeeToken });
    expect(await objectsOf(a.company.id)).to.have.lengthOf(2);
    expectErrorBody(await call('DELETE', `/files/${id}`, { token: b.adminToken }), 404);
    const del = await call('DELETE', `/files/${id}`, { token: a.adminToken });
    expect(del.status, del.text).to.equal(204);
    expect(await objectsOf(a.company.id)).to.deep.equal([]);
    const fp = await footprint(a.company.id);
    expect([fp.files, fp.versions, fp.datasets]).to.deep.equal([0, 0, 0]);
    for (const path of [`/files/${id}`, `/files/${id}/versions`, `/files/${id}/versions/1/preview`]) {
      expectErrorBody(await call('GET', path, { token: a.adminToken }), 404);
    }
    expectErrorBody(await call('DELETE', `/files/${id}`, { token: a.adminToken }), 404);
    expect((await call('GET', '/files', { token: a.adminToken })).body.data).to.deep.equal([]);
  });

  it('API keys: files:read lists and reads, files:write uploads; a key without the scope gets 403', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const readKey = await createApiKey(a.employee, ['files:read']);
    const writeKey = await createApiKey(a.employee, ['files:write']);
    const otherKey = await createApiKey(b.admin, ['files:read', 'files:write']);
    const up = await uploadFile(csv(1), { token: writeKey, name: 'by-key.csv' });
    expect(up.status, up.text).to.equal(201);
    expect(up.body.uploadedBy).to.equal(a.employee.id);
    expectErrorBody(await uploadFile(csv(1), { token: readKey }), 403);
    expectErrorBody(await call('GET', '/files', { token: writeKey }), 403);
    const list = await call('GET', '/files', { token: readKey });
    expect(list.body.data.map((f: any) => f.originalName)).to.deep.equal(['by-key.csv']);
    expect((await call('GET', '/files', { token: otherKey })).body.data).to.deep.equal([]);
    expectErrorBody(await call('GET', `/files/${up.body.id}`, { token: otherKey }), 404);
    const audit = await testEnv().knex('auditLog').where({ resourceId: up.body.id }).first();
    expect(audit.actorApiKeyId).to.be.a('string');
  });

  it('refuses a request that is not multipart (415), has no file part (400), or has two files (400)', async () => {
    const a = await createTeam({ plan: 'premium' });
    expectErrorBody(await call('POST', '/files', { token: a.adminToken, json: {} }), 415);
    const empty = await uploadFile('', { token: a.adminToken });
    expect(expectErrorBody(empty, 400).message).to.equal('the file is empty');
    const onlyField = multipart([{ name: 'visibility', data: 'company' }]);
    const res = await fetch(`${testEnv().baseUrl}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.adminToken}`, 'content-type': onlyField.contentType },
      body: onlyField.body,
    });
    const body = (await res.json()) as any;
    expect(res.status).to.equal(400);
    expect(body.message).to.equal('form.file is required');
    const two = await uploadFile(csv(1), {
      token: a.adminToken,
      extra: [{ name: 'file', filename: 'b.csv', data: csv(1) }],
    });
    expect(expectErrorBody(two, 400).message).to.equal('form: send exactly one file, in the part "file"');
    const fp = await footprint(a.company.id);
    expect(fp).to.include({ objects: 0, files: 0, events: 0, filesUsed: 0 });
  });
});
