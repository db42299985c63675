import { expect } from 'chai';
import { periodKey, PLANS } from '../../domain/plans/plans';
import { call, expectErrorBody } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { createApiKey, createTeam } from '../helpers/factories';
import { csv, expectHiddenFrom, footprint, multipart, uploadFile, uploadTo } from '../helpers/files';
import { readResponse, type HttpResponse } from '../helpers/http';

async function setUsage(companyId: string, filesUsed: number): Promise<void> {
  await testEnv()
    .knex('fileUsage')
    .insert({ companyId, periodKey: periodKey(), filesUsed })
    .onConflict(['companyId', 'periodKey'])
    .merge();
}

async function usage(companyId: string): Promise<number> {
  const row = await testEnv().knex('fileUsage').where({ companyId, periodKey: periodKey() }).first();
  return row ? Number(row.filesUsed) : 0;
}

async function thresholdEvents(companyId: string): Promise<any[]> {
  const rows = await testEnv()
    .knex('outbox')
    .where({ companyId, type: 'quota.threshold' })
    .orderByRaw("(data->>'threshold')::int");
  return rows.map((r: any) => r.data);
}

describe('files: quota per billing period', function () {
  this.timeout(90_000);

  it('Free: 10 uploads a period (files and versions count); the 11th gets 402 naming the quota', async () => {
    const a = await createTeam({ plan: 'free' });
    const b = await createTeam({ plan: 'free' });
    const first = await uploadFile(csv(1), { token: a.adminToken });
    expect(first.status).to.equal(201);
    const version = await uploadTo(`/files/${first.body.id}/versions`, csv(1), { token: a.adminToken });
    expect(version.status).to.equal(201);
    expect(await usage(a.company.id)).to.equal(2);
    for (let i = 2; i < 10; i++)
      expect((await uploadFile(csv(1), { token: a.employeeToken })).status).to.equal(201);
    expect(await usage(a.company.id)).to.equal(10);

    const over = await uploadFile(csv(1), { token: a.adminToken });
    const { message } = expectErrorBody(over, 402);
    expect(message).to.equal(
      `file quota reached: 10 files per billing period on the free plan (period ${periodKey()}); upgrade the plan to upload more`,
    );
    const overVersion = await uploadTo(`/files/${first.body.id}/versions`, csv(1), { token: a.adminToken });
    expectErrorBody(overVersion, 402);
    expect(await usage(a.company.id)).to.equal(10);
    // deleting does not give uploads back
    expect((await call('DELETE', `/files/${first.body.id}`, { token: a.adminToken })).status).to.equal(204);
    expectErrorBody(await uploadFile(csv(1), { token: a.adminToken }), 402);
    // the second company has its own quota
    expect((await uploadFile(csv(1), { token: b.adminToken })).status).to.equal(201);
    expect(await usage(b.company.id)).to.equal(1);

    // quota.threshold once at 80% (8 of 10) and once at 100%, with the spec's data fields
    expect(await thresholdEvents(a.company.id)).to.deep.equal([
      { threshold: 80, plan: 'free', periodKey: periodKey(), filesUsed: 8, filesLimit: 10 },
      { threshold: 100, plan: 'free', periodKey: periodKey(), filesUsed: 10, filesLimit: 10 },
    ]);
    expect(await thresholdEvents(b.company.id)).to.deep.equal([]);
  });

  it('concurrent uploads at the edge cannot both pass: one 201, the others 402', async () => {
    const a = await createTeam({ plan: 'free' });
    await setUsage(a.company.id, 9);
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => uploadFile(csv(200, 5, `p${i}`), { token: a.adminToken })),
    );
    const b = await createTeam({ plan: 'free' });
    await expectHiddenFrom(
      b.adminToken,
      results.filter((r) => r.status === 201).map((r) => r.body.id as string),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([201, 402, 402, 402]);
    expect(await usage(a.company.id)).to.equal(10);
    const fp = await footprint(a.company.id);
    expect(fp).to.include({ files: 1, versions: 1, objects: 1 });
    expect((await thresholdEvents(a.company.id)).map((e) => e.threshold)).to.deep.equal([80, 100]);
  });

  it('Basic: 402 at its quota; the plan limit on versions gives 409', async () => {
    const a = await createTeam({ plan: 'basic' });
    const b = await createTeam({ plan: 'basic' });
    const first = await uploadFile(csv(1), { token: a.adminToken });
    await expectHiddenFrom(b.adminToken, [first.body.id]);
    await testEnv()
      .knex('files')
      .where({ id: first.body.id })
      .update({ currentVersion: PLANS.basic.versionsPerFile });
    const tooMany = await uploadTo(`/files/${first.body.id}/versions`, csv(1), { token: a.adminToken });
    expect(expectErrorBody(tooMany, 409).message).to.equal(
      `the file has ${PLANS.basic.versionsPerFile} versions: the basic plan keeps at most ${PLANS.basic.versionsPerFile} versions of a file`,
    );
    await setUsage(a.company.id, PLANS.basic.filesPerPeriod);
    expect(
      String(expectErrorBody(await uploadFile(csv(1), { token: a.adminToken }), 402).message),
    ).to.include(`${PLANS.basic.filesPerPeriod} files per billing period on the basic plan`);
  });

  it('Free: the 6th version of a file gives 409 (5 versions kept)', async () => {
    const a = await createTeam({ plan: 'free' });
    const b = await createTeam({ plan: 'free' });
    const first = await uploadFile(csv(1), { token: a.adminToken });
    for (let v = 2; v <= 5; v++) {
      expect(
        (await uploadTo(`/files/${first.body.id}/versions`, csv(1), { token: a.adminToken })).status,
      ).to.equal(201);
    }
    expectErrorBody(await uploadTo(`/files/${first.body.id}/versions`, csv(1), { token: a.adminToken }), 409);
    expect(await usage(a.company.id)).to.equal(5);
    await expectHiddenFrom(b.adminToken, [first.body.id]);
    expect(await usage(b.company.id)).to.equal(0);
  });

  it('Premium goes on over its quota and counts the excess; thresholds are still sent once', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const limit = PLANS.premium.filesPerPeriod;
    await setUsage(a.company.id, limit - 1);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await uploadFile(csv(1), { token: a.adminToken });
      expect(res.status).to.equal(201);
      ids.push(res.body.id);
    }
    await expectHiddenFrom(b.adminToken, ids);
    expect(await thresholdEvents(b.company.id)).to.deep.equal([]);
    expect(await usage(a.company.id)).to.equal(limit + 2);
    expect(await thresholdEvents(a.company.id)).to.deep.equal([
      { threshold: 80, plan: 'premium', periodKey: periodKey(), filesUsed: limit, filesLimit: limit },
      { threshold: 100, plan: 'premium', periodKey: periodKey(), filesUsed: limit, filesLimit: limit },
    ]);
  });

  it('an upload that began before a downgrade is counted against the new plan it is saved under', async () => {
    const a = await createTeam({ plan: 'premium' });
    const key = await createApiKey(a.admin, ['files:write']);
    await setUsage(a.company.id, PLANS.free.filesPerPeriod);
    // the upload's request reaches the server and is authenticated (the key's first use is written), its
    // body held back; meanwhile the admin moves the company to Free, whose quota is used up
    const { body, contentType } = multipart([{ name: 'file', filename: 'late.csv', data: csv(5) }]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // the first bytes go at once (the client sends the request's head with them), the rest after the gate
    const chunks = [body.subarray(0, 16), body.subarray(16)];
    let next = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (next > 0) await gate;
        if (next === chunks.length) controller.close();
        else controller.enqueue(chunks[next++]);
      },
    });
    const upload: Promise<HttpResponse> = fetch(`${testEnv().baseUrl}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      body: stream,
      duplex: 'half',
    } as RequestInit).then(readResponse);
    try {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const row = await testEnv().knex('apiKeys').where({ companyId: a.company.id }).first();
        if (row?.lastUsedAt) break;
        if (Date.now() > deadline) throw new Error('the upload was not authenticated within 10 s');
        await new Promise((r) => setTimeout(r, 20));
      }
      const changed = await call('PATCH', '/subscriptions/me', {
        token: a.adminToken,
        json: { plan: 'free' },
      });
      expect(changed.status).to.equal(200);
    } finally {
      release();
    }
    const res = await upload;
    expect(expectErrorBody(res, 402).message).to.include('10 files per billing period on the free plan');
    expect(await usage(a.company.id)).to.equal(PLANS.free.filesPerPeriod);
    expect(await footprint(a.company.id)).to.include({ files: 0, objects: 0 });
  });

  it('a company without a plan gets 402 on uploads', async () => {
    const a = await createTeam({ plan: null });
    const res = await uploadFile(csv(1), { token: a.adminToken });
    expect(expectErrorBody(res, 402).message).to.equal('choose a plan first (PATCH /subscriptions/me)');
    expect(await footprint(a.company.id)).to.include({ files: 0, objects: 0 });
  });
});
