/**
 * The eight outgoing-webhook endpoints through HTTP, as a client calls them. The first part runs against
 * the run's API with the default settings (https only, private addresses refused); the second against an
 * API and a worker with the test-only settings, delivering to real receivers on loopback.
 */
import { expect } from 'chai';
import { webhookSecretBox } from '../../domain/webhooks/secret';
import { WebhookEndpoint } from '../../db/models';
import { transact } from '../../db/transaction';
import { createApiKey, createTeam, createTeamAndOther, type Team } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { untilLockWaiters } from '../helpers/locks';
import { call, expectErrorBody } from '../helpers/http';
import { REFUSED_HOSTS } from '../helpers/refusedTargets';
import { eventually } from '../helpers/temporal';
import {
  finishedDeliveries,
  endpointSettled,
  startReceiver,
  type Receiver,
  startWebhookApp,
  startWebhookWorker,
  stopOtherDispatchers,
  webhookTestConfig,
  type RunningWorker,
} from '../helpers/webhooks';
import { SCOPES } from '../../api/routing';

const PUBLIC_URL = 'https://93.184.216.34/hook';
function create(team: Team, json: unknown) {
  return call('POST', '/outgoing-webhooks', { token: team.adminToken, json });
}

describe('outgoing webhooks API', function () {
  this.timeout(60_000);
  let team: Team;
  let other: Team;

  before(async () => {
    ({ team, other } = await createTeamAndOther());
  });

  it('creates an endpoint (201): secret whsec_ shown once, stored encrypted, audited', async () => {
    const res = await create(team, {
      name: 'Orders',
      url: PUBLIC_URL,
      events: ['file.uploaded', 'report.ready'],
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ name: 'Orders', url: PUBLIC_URL, active: true, consecutiveFailures: 0 });
    expect(res.body.events).to.deep.equal(['file.uploaded', 'report.ready']);
    expect(res.body).to.include({ disabledReason: null, disabledAt: null });
    expect(res.body.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Object.keys(res.body).sort()).to.deep.equal(
      [
        'id',
        'name',
        'url',
        'events',
        'active',
        'disabledReason',
        'disabledAt',
        'consecutiveFailures',
        'createdAt',
        'updatedAt',
        'secret',
      ].sort(),
    );
    const row = (await WebhookEndpoint.query(testEnv().knex).findById(res.body.id))!;
    expect(row.companyId).to.equal(team.company.id);
    expect(row.secretEncrypted).to.not.include(res.body.secret.slice(6));
    expect(webhookSecretBox(testEnv().config.secretKey).open(row.id, row.secretEncrypted)).to.equal(
      res.body.secret,
    );
    const audit = await testEnv().knex('auditLog').where({ resourceId: row.id });
    expect(audit.map((a) => a.action)).to.deep.equal(['webhook_endpoint.created']);
    expect(audit[0]).to.include({ actorPersonId: team.admin.id, companyId: team.company.id });

    // never shown again: not in the list
    const list = await call('GET', '/outgoing-webhooks', { token: team.adminToken });
    expect(list.body.data.find((e: { id: string }) => e.id === row.id)).to.not.have.property('secret');
  });

  it('validates the body: name, url, events, unknown fields (400 naming each mistake)', async () => {
    const cases: Array<[unknown, RegExp | string]> = [
      [{ url: PUBLIC_URL, events: ['ping'] }, 'body.name is required'],
      [
        { name: 'x'.repeat(101), url: PUBLIC_URL, events: ['ping'] },
        /body\.name must NOT have more than 100/,
      ],
      [{ name: '   ', url: PUBLIC_URL, events: ['ping'] }, /body\.name must not be blank/],
      [{ name: 'n', events: ['ping'] }, 'body.url is required'],
      [{ name: 'n', url: 'example.com/hook', events: ['ping'] }, 'body.url: url must be an absolute URL'],
      [{ name: 'n', url: 'ftp://93.184.216.34/', events: ['ping'] }, 'body.url: url must use https'],
      [
        { name: 'n', url: 'http://93.184.216.34/', events: ['ping'] },
        /body\.url: url must use https \(plain http/,
      ],
      [
        { name: 'n', url: 'https://u:p@93.184.216.34/', events: ['ping'] },
        'body.url: url must not contain credentials',
      ],
      [{ name: 'n', url: PUBLIC_URL }, 'body.events is required'],
      [{ name: 'n', url: PUBLIC_URL, events: [] }, /body\.events must NOT have fewer than 1/],
      [
        { name: 'n', url: PUBLIC_URL, events: ['file.deleted'] },
        /body\.events\[0\] must be one of file\.uploaded/,
      ],
      [{ name: 'n', url: PUBLIC_URL, events: ['ping', 'ping'] }, /body\.events must not repeat items/],
      [{ name: 'n', url: PUBLIC_URL, events: ['ping'], secret: 'mine' }, 'body: unknown field "secret"'],
    ];
    for (const [json, expected] of cases) {
      const { message } = expectErrorBody(await create(team, json), 400);
      const text = Array.isArray(message) ? message.join(' | ') : message;
      if (typeof expected === 'string') expect(text, JSON.stringify(json)).to.equal(expected);
      else expect(text, JSON.stringify(json)).to.match(expected);
    }
    const several = expectErrorBody(await create(team, { name: '', events: 'ping', extra: 1 }), 400);
    expect(several.message).to.be.an('array').with.length.of.at.least(3);
  });

  it('refuses every private address form at creation and at update (default settings)', async () => {
    const { body } = await create(team, { name: 'to move', url: PUBLIC_URL, events: ['ping'] });
    for (const [host, what] of [...REFUSED_HOSTS, ['localhost', 'loopback by name'] as [string, string]]) {
      const url = `https://${host}/hook`;
      const created = expectErrorBody(await create(team, { name: 'n', url, events: ['ping'] }), 400);
      expect(String(created.message), `${url} (${what})`).to.match(
        /^body\.url: url refused: .*not a public address/,
      );
      const patched = expectErrorBody(
        await call('PATCH', `/outgoing-webhooks/${body.id}`, { token: team.adminToken, json: { url } }),
        400,
      );
      expect(String(patched.message), `${url} (${what})`).to.match(/not a public address/);
    }
    const row = (await WebhookEndpoint.query(testEnv().knex).findById(body.id))!;
    expect(row.url).to.equal(PUBLIC_URL);
  });

  it('is admin session only: API keys (any scope) and employees get 403', async () => {
    const key = await createApiKey(team.admin, [...SCOPES]);
    const { body } = await create(team, { name: 'k', url: PUBLIC_URL, events: ['ping'] });
    const attempts: Array<[string, string, unknown]> = [
      ['POST', '/outgoing-webhooks', { name: 'n', url: PUBLIC_URL, events: ['ping'] }],
      ['GET', '/outgoing-webhooks', undefined],
      ['PATCH', `/outgoing-webhooks/${body.id}`, { name: 'x' }],
      ['DELETE', `/outgoing-webhooks/${body.id}`, undefined],
      ['POST', `/outgoing-webhooks/${body.id}/rotate-secret`, undefined],
      ['POST', `/outgoing-webhooks/${body.id}/ping`, undefined],
      ['GET', `/outgoing-webhooks/${body.id}/deliveries`, undefined],
      ['POST', `/outgoing-webhooks/deliveries/${body.id}/redeliver`, undefined],
    ];
    for (const [method, path, json] of attempts) {
      expectErrorBody(await call(method, path, { token: key, json }), 403);
      expectErrorBody(await call(method, path, { token: team.employeeToken, json }), 403);
    }
    expect(await WebhookEndpoint.query(testEnv().knex).findById(body.id)).to.exist;
  });

  it('limits endpoints per plan: Free 1, Basic 5 (409 beyond), Premium no limit; no plan 402', async () => {
    const fill = async (t: Team, n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await create(t, { name: `e${i}`, url: PUBLIC_URL, events: ['ping'] });
        expect(res.status, res.text).to.equal(201);
      }
    };
    const free = await createTeam({ plan: 'free' });
    await fill(free, 1);
    const overFree = expectErrorBody(
      await create(free, { name: 'x', url: PUBLIC_URL, events: ['ping'] }),
      409,
    );
    expect(overFree.message).to.equal(
      'the free plan allows 1 webhook endpoint; delete one or change the plan',
    );

    const basic = await createTeam({ plan: 'basic' });
    await fill(basic, 5);
    expectErrorBody(await create(basic, { name: 'x', url: PUBLIC_URL, events: ['ping'] }), 409);
    // removing one makes room again
    const list = await call('GET', '/outgoing-webhooks', { token: basic.adminToken });
    expect(
      (await call('DELETE', `/outgoing-webhooks/${list.body.data[0].id}`, { token: basic.adminToken }))
        .status,
    ).to.equal(204);
    expect((await create(basic, { name: 'again', url: PUBLIC_URL, events: ['ping'] })).status).to.equal(201);

    const premium = await createTeam({ plan: 'premium' });
    await fill(premium, 8);

    const none = await createTeam({ plan: null });
    expectErrorBody(await create(none, { name: 'x', url: PUBLIC_URL, events: ['ping'] }), 402);

    // concurrent creations cannot pass the limit together
    const race = await createTeam({ plan: 'free' });
    const results = await Promise.all(
      [1, 2, 3].map((i) => create(race, { name: `r${i}`, url: PUBLIC_URL, events: ['ping'] })),
    );
    expect(results.map((r) => r.status).sort()).to.deep.equal([201, 409, 409]);
  });

  it("lists the company's endpoints newest first as a page-number list; never another company's", async () => {
    const t = await createTeam({ plan: 'premium' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await create(t, { name: `n${i}`, url: PUBLIC_URL, events: ['ping'] })).body.id);
    }
    await create(other, { name: 'theirs', url: PUBLIC_URL, events: ['ping'] });
    const page1 = await call('GET', '/outgoing-webhooks?page=1&limit=2', { token: t.adminToken });
    expect(page1.status).to.equal(200);
    expect(page1.body.meta).to.deep.equal({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect(page1.body.data.map((e: { id: string }) => e.id)).to.deep.equal([ids[2], ids[1]]);
    const page2 = await call('GET', '/outgoing-webhooks?page=2&limit=2', { token: t.adminToken });
    expect(page2.body.data.map((e: { id: string }) => e.id)).to.deep.equal([ids[0]]);
    const all = await call('GET', '/outgoing-webhooks', { token: t.adminToken });
    expect(all.body.meta).to.deep.equal({ page: 1, limit: 20, total: 3, totalPages: 1 });
    expectErrorBody(await call('GET', '/outgoing-webhooks?limit=101', { token: t.adminToken }), 400);
    expectErrorBody(await call('GET', '/outgoing-webhooks?page=0', { token: t.adminToken }), 400);
    expectErrorBody(await call('GET', '/outgoing-webhooks?cursor=x', { token: t.adminToken }), 400);
  });

  it('PATCH changes name, url and events; active false disables, active true re-enables and resets', async () => {
    const { body } = await create(team, { name: 'p', url: PUBLIC_URL, events: ['ping'] });
    const path = `/outgoing-webhooks/${body.id}`;
    const renamed = await call('PATCH', path, {
      token: team.adminToken,
      json: {
        name: 'renamed',
        url: 'https://93.184.216.35/other',
        events: ['report.ready', 'report.failed'],
      },
    });
    expect(renamed.status, renamed.text).to.equal(200);
    expect(renamed.body).to.include({ name: 'renamed', url: 'https://93.184.216.35/other', active: true });
    expect(renamed.body.events).to.deep.equal(['report.ready', 'report.failed']);
    expect(renamed.body).to.not.have.property('secret');

    const off = await call('PATCH', path, { token: team.adminToken, json: { active: false } });
    expect(off.body).to.include({ active: false, disabledReason: 'disabled_by_admin' });
    expect(Date.parse(off.body.disabledAt)).to.be.closeTo(Date.now(), 60_000);

    await WebhookEndpoint.query(testEnv().knex).findById(body.id).patch({ consecutiveFailures: 20 });
    const on = await call('PATCH', path, { token: team.adminToken, json: { active: true } });
    expect(on.body).to.include({
      active: true,
      disabledReason: null,
      disabledAt: null,
      consecutiveFailures: 0,
    });

    expectErrorBody(await call('PATCH', path, { token: team.adminToken, json: {} }), 400);
    expectErrorBody(await call('PATCH', path, { token: team.adminToken, json: { secret: 'x' } }), 400);
    expectErrorBody(await call('PATCH', path, { token: team.adminToken, json: { active: 'yes' } }), 400);
    expectErrorBody(
      await call('PATCH', '/outgoing-webhooks/not-a-uuid', { token: team.adminToken, json: { name: 'x' } }),
      400,
    );
    const audit = await testEnv().knex('auditLog').where({ resourceId: body.id }).orderBy('createdAt');
    expect(audit.map((a) => a.action)).to.deep.equal([
      'webhook_endpoint.created',
      'webhook_endpoint.updated',
      'webhook_endpoint.updated',
      'webhook_endpoint.updated',
    ]);
  });

  it('DELETE removes (204); afterwards the endpoint is not found', async () => {
    const { body } = await create(team, { name: 'd', url: PUBLIC_URL, events: ['ping'] });
    const path = `/outgoing-webhooks/${body.id}`;
    expect((await call('DELETE', path, { token: team.adminToken })).status).to.equal(204);
    expectErrorBody(await call('DELETE', path, { token: team.adminToken }), 404);
    expectErrorBody(await call('PATCH', path, { token: team.adminToken, json: { name: 'x' } }), 404);
    expectErrorBody(await call('GET', `${path}/deliveries`, { token: team.adminToken }), 404);
    // another company's endpoint is not found either, and stays
    const theirs = await create(other, { name: 'o', url: PUBLIC_URL, events: ['ping'] });
    expectErrorBody(
      await call('DELETE', `/outgoing-webhooks/${theirs.body.id}`, { token: team.adminToken }),
      404,
    );
    expect(await WebhookEndpoint.query(testEnv().knex).findById(theirs.body.id)).to.exist;
  });

  it('a ping asked for while the endpoint is being deleted: 404, nothing queued', async () => {
    const { knex } = testEnv();
    const { body } = await create(team, { name: 'racing', url: PUBLIC_URL, events: ['ping'] });
    // the delete as DELETE /outgoing-webhooks/{id} makes it (the endpoint locked and removed), held open
    // while the ping is asked for: the request reads the committed (active) endpoint, and must not answer 409
    // (its delivery refused by the foreign key) once the delete commits
    const trx = await knex.transaction();
    let asked: ReturnType<typeof call> | undefined;
    try {
      await trx('webhookEndpoints').where({ id: body.id }).forUpdate().first();
      await trx('webhookEndpoints').where({ id: body.id }).delete();
      let answered = false;
      asked = call('POST', `/outgoing-webhooks/${body.id}/ping`, { token: team.adminToken }).then(
        (r) => ((answered = true), r),
      );
      await untilLockWaiters(knex, 1, () => answered);
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    expectErrorBody(await asked!, 404);
    const events = await knex('outbox')
      .where({ type: 'ping' })
      .whereRaw(`data->>'endpointId' = ?`, [body.id]);
    expect(events).to.have.lengthOf(0);
  });

  it('rotate-secret shows a new secret once and stores it encrypted; the old one is gone', async () => {
    const { body } = await create(team, { name: 'r', url: PUBLIC_URL, events: ['ping'] });
    const res = await call('POST', `/outgoing-webhooks/${body.id}/rotate-secret`, { token: team.adminToken });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.secret)
      .to.match(/^whsec_/)
      .and.to.not.equal(body.secret);
    expect(res.body.id).to.equal(body.id);
    const row = (await WebhookEndpoint.query(testEnv().knex).findById(body.id))!;
    expect(webhookSecretBox(testEnv().config.secretKey).open(row.id, row.secretEncrypted)).to.equal(
      res.body.secret,
    );
    const audit = await testEnv()
      .knex('auditLog')
      .where({ resourceId: body.id, action: 'webhook_endpoint.secret_rotated' });
    expect(audit).to.have.lengthOf(1);
  });

  it('the default settings refuse a loopback receiver (plain http and private address)', async () => {
    const receiver = await startReceiver();
    const plain = expectErrorBody(
      await create(team, { name: 'l', url: receiver.url, events: ['ping'] }),
      400,
    );
    expect(plain.message).to.match(/url must use https/);
    const tls = receiver.url.replace('http:', 'https:');
    const priv = expectErrorBody(await create(team, { name: 'l', url: tls, events: ['ping'] }), 400);
    expect(priv.message).to.match(/127\.0\.0\.1 is not a public address \(loopback\)/);
  });
});

describe('outgoing webhooks API, delivering to loopback receivers (test-only settings)', function () {
  this.timeout(90_000);
  let running: RunningWorker;
  let baseUrl: string;
  let team: Team;
  const api = (method: string, path: string, json?: unknown) =>
    call(method, path, { baseUrl, token: team.adminToken, json });
  /** An endpoint registered through the API for `receiver`, whose secret the receiver then verifies with. */
  const endpointFor = async (receiver: Receiver, name: string, events: string[]) => {
    const created = await api('POST', '/outgoing-webhooks', { name, url: receiver.url, events });
    expect(created.status, created.text).to.equal(201);
    receiver.secrets = [created.body.secret];
    return created.body as { id: string; secret: string };
  };

  before(async () => {
    await stopOtherDispatchers();
    const config = webhookTestConfig('webhooks-api');
    running = await startWebhookWorker(config);
    ({ baseUrl } = await startWebhookApp(config));
    team = await createTeam({ plan: 'premium' });
  });
  after(async () => {
    await running.stop();
  });

  it('ping (202) sends a signed ping to that endpoint; the deliveries list shows the outcome', async () => {
    const receiver = await startReceiver();
    const hook = await endpointFor(receiver, 'p', ['file.uploaded']);

    const ping = await api('POST', `/outgoing-webhooks/${hook.id}/ping`);
    expect(ping.status, ping.text).to.equal(202);
    expect(ping.body).to.include({
      endpointId: hook.id,
      eventType: 'ping',
      status: 'pending',
      attempts: 0,
    });
    await eventually(async () => receiver.requests.length === 1, { what: 'ping received' });
    const req = receiver.requests[0];
    expect(req.verifiedWith).to.equal(0);
    expect(req.headers['webhook-id']).to.equal(ping.body.eventId);
    expect(req.body).to.include({
      type: 'ping',
      id: ping.body.eventId,
      companyId: team.company.id,
      schemaVersion: 1,
    });
    expect(req.body.data).to.deep.equal({ endpointId: hook.id });

    await finishedDeliveries(hook.id, 1);
    const list = await api('GET', `/outgoing-webhooks/${hook.id}/deliveries`);
    expect(list.status).to.equal(200);
    expect(list.body.meta).to.deep.equal({ page: 1, limit: 20, total: 1, totalPages: 1 });
    expect(list.body.data[0]).to.include({
      id: ping.body.id,
      eventId: ping.body.eventId,
      status: 'succeeded',
      attempts: 1,
      responseStatus: 200,
      lastError: null,
      redeliveryOf: null,
    });
    expectErrorBody(await api('GET', `/outgoing-webhooks/${hook.id}/deliveries?limit=0`), 400);
  });

  it('redelivery sends the same event again (same webhook-id, same body) as a new delivery', async () => {
    const receiver = await startReceiver();
    const hook = await endpointFor(receiver, 'r', ['report.ready']);
    const eventId = await transact(testEnv().knex, ({ emit }) =>
      emit({
        companyId: team.company.id,
        type: 'report.ready',
        data: { fileId: 'f-1', reportStatus: 'ready' },
      }),
    );
    const [first] = await finishedDeliveries(hook.id, 1);
    expect(first.eventId).to.equal(eventId);

    const again = await api('POST', `/outgoing-webhooks/deliveries/${first.id}/redeliver`);
    expect(again.status, again.text).to.equal(202);
    expect(again.body).to.include({ eventId, redeliveryOf: first.id, status: 'pending' });
    expect(again.body.id).to.not.equal(first.id);
    await finishedDeliveries(hook.id, 2);
    expect(receiver.requests).to.have.lengthOf(2);
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).to.deep.equal([eventId, eventId]);
    expect(receiver.requests[1].rawBody).to.equal(receiver.requests[0].rawBody);
    expect(receiver.requests.map((r) => r.verifiedWith)).to.deep.equal([0, 0]);

    const list = await api('GET', `/outgoing-webhooks/${hook.id}/deliveries`);
    expect(list.body.data.map((d: { id: string }) => d.id)).to.deep.equal([again.body.id, first.id]);
    expect(list.body.data[0]).to.include({ status: 'succeeded', attempts: 1, redeliveryOf: first.id });

    // another company cannot redeliver it
    const stranger = await createTeam({ plan: 'premium' });
    expectErrorBody(
      await call('POST', `/outgoing-webhooks/deliveries/${first.id}/redeliver`, {
        baseUrl,
        token: stranger.adminToken,
      }),
      404,
    );
  });

  it('rotation via the API while a delivery is retrying: later attempts verify only with the new secret', async () => {
    let rotate: () => void = () => undefined;
    const rotated = new Promise<void>((resolve) => (rotate = resolve));
    const receiver = await startReceiver(async (n) => (n === 1 ? rotated.then(() => 500) : 200));
    const hook = await endpointFor(receiver, 'rot', ['ping']);
    await api('POST', `/outgoing-webhooks/${hook.id}/ping`);
    await eventually(async () => receiver.requests.length === 1, { what: 'first attempt' });
    const rotation = await api('POST', `/outgoing-webhooks/${hook.id}/rotate-secret`);
    expect(rotation.status).to.equal(200);
    receiver.secrets.push(rotation.body.secret);
    rotate();
    const [delivery] = await finishedDeliveries(hook.id, 1);
    expect(delivery).to.include({ status: 'succeeded', attempts: 2 });
    // first attempt: the old secret; second: only the new one (the old one no longer verifies it)
    expect(receiver.requests.map((r) => r.verifiedWith)).to.deep.equal([0, 1]);
  });

  it('410 disables the endpoint (visible with reason and time); ping and redeliver then 409; PATCH active true re-enables', async () => {
    let answer = 410;
    const receiver = await startReceiver(() => answer);
    const hook = await endpointFor(receiver, 'g', ['ping']);
    const ping = await api('POST', `/outgoing-webhooks/${hook.id}/ping`);
    await finishedDeliveries(hook.id, 1);
    const list = await api('GET', '/outgoing-webhooks');
    const endpoint = list.body.data.find((e: { id: string }) => e.id === hook.id);
    expect(endpoint).to.include({ active: false, disabledReason: 'receiver_gone', consecutiveFailures: 1 });
    expect(Date.parse(endpoint.disabledAt)).to.be.closeTo(Date.now(), 60_000);

    expectErrorBody(await api('POST', `/outgoing-webhooks/${hook.id}/ping`), 409);
    expectErrorBody(await api('POST', `/outgoing-webhooks/deliveries/${ping.body.id}/redeliver`), 409);

    answer = 200;
    const on = await api('PATCH', `/outgoing-webhooks/${hook.id}`, { active: true });
    expect(on.body).to.include({ active: true, disabledReason: null, consecutiveFailures: 0 });
    expect((await api('POST', `/outgoing-webhooks/${hook.id}/ping`)).status).to.equal(202);
    const rows = await finishedDeliveries(hook.id, 2);
    expect(rows.map((r) => r.status)).to.deep.equal(['failed', 'succeeded']);
    await endpointSettled(hook.id); // nothing more can be sent
    expect(receiver.requests).to.have.lengthOf(2);
  });
});
