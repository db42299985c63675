/**
 * The webhooks domain called as any adapter would (an MCP tool, a GraphQL resolver): commands with their
 * dependencies, an actor and a unit of work, no Koa context. Also the endpoint state transitions, which
 * have one home (domain/webhooks/state.ts): the admin's disable and the service's own.
 */
import { expect } from 'chai';
import { createLogger } from '../../../common/logger';
import { ForbiddenError, NotFoundError } from '../../../common/errors';
import { WebhookEndpoint } from '../../../db/models';
import { transact } from '../../../db/transaction';
import type { Actor } from '../../../domain/webhooks/access';
import {
  checkTarget,
  createEndpoint,
  getEndpoint,
  listEndpoints,
  updateEndpoint,
} from '../../../domain/webhooks/endpoints';
import { webhookSecretBox } from '../../../domain/webhooks/secret';
import { disableAutomatically } from '../../../domain/webhooks/state';
import type { Resolver } from '../../../domain/webhooks/targets';
import { createPerson } from '../../helpers/factories';
import { testEnv } from '../../helpers/env';
import { newCompany } from '../../helpers/webhooks';

/** DNS that answers a public address for every name (no network in tests). */
const publicDns: Resolver = (_host, _options, callback) =>
  callback(null, [{ address: '93.184.215.14', family: 4 }]);

async function adminOf(plan: 'free' | 'premium' = 'premium'): Promise<Actor> {
  const company = await newCompany(plan);
  const person = await createPerson(company, { role: 'admin' });
  return { kind: 'session', companyId: company.id, personId: person.id, role: 'admin' };
}

describe('webhooks domain: endpoint commands without an HTTP request', () => {
  const logger = createLogger('silent', 'test');

  async function create(actor: Actor, name = 'hook') {
    const { config, knex } = testEnv();
    const url = await checkTarget({ config, resolver: publicDns }, 'https://receiver.example.com/hook');
    return transact(knex, (uow) =>
      createEndpoint({ config }, actor, uow, { name, url, events: ['file.uploaded'] }),
    );
  }

  it('creates an endpoint with a sealed secret and an audit entry carrying the correlation id', async () => {
    const { config, knex } = testEnv();
    const actor = await adminOf();
    const url = await checkTarget({ config, resolver: publicDns }, 'https://receiver.example.com/hook');
    const { endpoint, secret } = await transact(
      knex,
      (uow) => createEndpoint({ config }, actor, uow, { name: 'hook', url, events: ['file.uploaded'] }),
      { correlationId: 'domain-test-correlation' },
    );
    expect(secret).to.match(/^whsec_/);
    const stored = await WebhookEndpoint.scoped(actor.companyId, knex).findById(endpoint.id);
    expect(webhookSecretBox(config.secretKey).open(endpoint.id, stored!.secretEncrypted)).to.equal(secret);
    const audit = await knex('auditLog').where({ resourceId: endpoint.id }).first();
    expect(audit).to.include({
      action: 'webhook_endpoint.created',
      correlationId: 'domain-test-correlation',
    });
  });

  it('refuses a target the address guard refuses, before any unit of work', async () => {
    const { config } = testEnv();
    const guarded = { config: { webhooks: { ...config.webhooks, allowPrivateTargets: false } } };
    const err = await checkTarget(guarded, 'https://127.0.0.1/hook').catch((e: unknown) => e);
    expect(err).to.have.property('statusCode', 400);
    expect((err as Error).message).to.match(/^body\.url: url refused: 127\.0\.0\.1/);
  });

  it('lets only an admin in a session manage webhooks, and shows no endpoint of another company', async () => {
    const { knex } = testEnv();
    const actor = await adminOf();
    const { endpoint } = await create(actor);
    for (const other of [
      { ...actor, role: 'employee' as const },
      { ...actor, kind: 'key' as const },
    ]) {
      expect(() => listEndpoints(other, knex)).to.throw(ForbiddenError);
    }
    const stranger = await adminOf();
    const err = await getEndpoint(stranger, knex, endpoint.id).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(NotFoundError);
    expect((await getEndpoint(actor, knex, endpoint.id)).id).to.equal(endpoint.id);
  });

  it('disables by the admin and enables again through the one set of state transitions', async () => {
    const { knex } = testEnv();
    const actor = await adminOf();
    const { endpoint } = await create(actor);
    await knex('webhookEndpoints').where({ id: endpoint.id }).update({ consecutiveFailures: 7 });

    const disabled = await transact(knex, (uow) =>
      updateEndpoint(actor, uow, endpoint.id, { active: false }),
    );
    expect(disabled).to.include({ active: false, disabledReason: 'disabled_by_admin' });
    expect(disabled.disabledAt).to.be.instanceOf(Date);

    // the service's own disable does not overwrite the reason an endpoint was disabled with
    const changed = await transact(knex, ({ trx }) =>
      disableAutomatically(trx, logger, endpoint, 'receiver_gone', { test: true }),
    );
    expect(changed).to.equal(false);

    const enabled = await transact(knex, (uow) => updateEndpoint(actor, uow, endpoint.id, { active: true }));
    expect(enabled).to.include({
      active: true,
      disabledReason: null,
      disabledAt: null,
      consecutiveFailures: 0,
    });

    const gone = await transact(knex, ({ trx }) =>
      disableAutomatically(trx, logger, endpoint, 'receiver_gone', { test: true }),
    );
    expect(gone).to.equal(true);
    const row = await WebhookEndpoint.scoped(actor.companyId, knex).findById(endpoint.id);
    expect(row).to.include({ active: false, disabledReason: 'receiver_gone' });
    const audit = await knex('auditLog')
      .where({ resourceId: endpoint.id, action: 'webhook_endpoint.disabled' })
      .first();
    expect(audit.actorPersonId).to.equal(null);
    expect(audit.details).to.deep.include({ reason: 'receiver_gone', automatic: true });
  });
});
