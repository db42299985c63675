/**
 * The identity domain called as any adapter would (an MCP tool, a GraphQL resolver, an activity): commands
 * with their dependencies, an actor and a unit of work, no Koa context. Mails leave only after commit.
 */
import { expect } from 'chai';
import { ConflictError, ForbiddenError, NotFoundError } from '../../../common/errors';
import { createLogger } from '../../../common/logger';
import type { Mail } from '../../../common/mailer';
import { transact } from '../../../db/transaction';
import type { Actor } from '../../../domain/identity/access';
import { apiKeysList, createApiKey, revokeApiKey } from '../../../domain/identity/apiKeys';
import { verifyApiKey } from '../../../domain/identity/authentication';
import type { IdentityDeps } from '../../../domain/identity/deps';
import { invitePerson, peopleList, removePerson, updatePerson } from '../../../domain/identity/people';
import { createCompany, createPerson, signIn, type TestPerson } from '../../helpers/factories';
import { testEnv } from '../../helpers/env';

function actorOf(person: TestPerson): Actor {
  return { kind: 'session', companyId: person.companyId, personId: person.id, role: person.role };
}

/** The deps of the domain with a mailer that keeps what it is given (the mail sink is not what is tested). */
function depsWithMailbox(): { deps: IdentityDeps; sent: Mail[] } {
  const { knex, config } = testEnv();
  const sent: Mail[] = [];
  const mailer = { send: async (mail: Mail) => void sent.push(mail) };
  return { deps: { knex, config, mailer, logger: createLogger('silent', 'test') }, sent };
}

describe('identity domain: commands without an HTTP request', () => {
  it('invites within the plan limit; the mail leaves after commit and the audit entry has the correlation id', async () => {
    const { knex } = testEnv();
    const { deps, sent } = depsWithMailbox();
    const company = await createCompany({ plan: 'free' });
    const admin = await createPerson(company, { role: 'admin' });
    const email = `invited-${company.id.slice(0, 8)}@example.test`;

    const { person } = await transact(
      knex,
      async (uow) => {
        const invited = await invitePerson(deps, actorOf(admin), uow, { email, role: 'employee' });
        expect(sent, 'no mail before commit').to.deep.equal([]);
        return invited;
      },
      { correlationId: 'corr-invite' },
    );
    expect(sent.map((m) => m.to)).to.deep.equal([email]);
    expect(person).to.include({ email, role: 'employee', status: 'not_activated' });
    const audit = (await knex('auditLog')
      .where({ resourceId: person.id, action: 'person.invited' })
      .first()) as {
      correlationId: string;
      actorPersonId: string;
    };
    expect(audit).to.include({ correlationId: 'corr-invite', actorPersonId: admin.id });
  });

  it('sends no mail when the unit of work rolls back, and at the plan limit answers a conflict', async () => {
    const { knex } = testEnv();
    const { deps, sent } = depsWithMailbox();
    const company = await createCompany({ plan: 'free' });
    const admin = await createPerson(company, { role: 'admin' });
    const email = `rolled-back-${company.id.slice(0, 8)}@example.test`;
    const failure = new Error('a later step of the same unit of work fails');
    const outcome = await transact(knex, async (uow) => {
      await invitePerson(deps, actorOf(admin), uow, { email, role: 'employee' });
      throw failure;
    }).catch((err: unknown) => err);
    expect(outcome).to.equal(failure);
    expect(sent).to.deep.equal([]);
    expect(await knex('people').where({ email }).first()).to.equal(undefined);

    // Free allows 3 people: fill the company, then one more is refused
    await createPerson(company, { role: 'employee' });
    await createPerson(company, { role: 'employee' });
    const refused = await transact(knex, (uow) =>
      invitePerson(deps, actorOf(admin), uow, { email, role: 'employee' }),
    ).catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(ConflictError);
    expect(sent).to.deep.equal([]);
  });

  it('keeps one active admin; disabling ends the sessions; another company’s person is not found', async () => {
    const { knex } = testEnv();
    const company = await createCompany({ plan: 'premium' });
    const admin = await createPerson(company, { role: 'admin' });
    const employee = await createPerson(company, { role: 'employee' });
    await signIn(employee);
    const stranger = await createPerson(await createCompany({ plan: 'premium' }), { role: 'employee' });
    const actor = actorOf(admin);

    const lastAdmin = await transact(knex, (uow) => removePerson(actor, uow, admin.id)).catch(
      (e: unknown) => e,
    );
    expect(lastAdmin).to.be.instanceOf(ConflictError);
    const elsewhere = await transact(knex, (uow) =>
      updatePerson(actor, uow, stranger.id, { status: 'disabled' }),
    ).catch((e: unknown) => e);
    expect(elsewhere).to.be.instanceOf(NotFoundError);

    const disabled = await transact(knex, (uow) =>
      updatePerson(actor, uow, employee.id, { status: 'disabled' }),
    );
    expect(disabled.status).to.equal('disabled');
    const open = await knex('sessions').where({ personId: employee.id }).whereNull('endedAt');
    expect(open).to.deep.equal([]);
    const listed = (await peopleList(actor, knex)) as Array<{ id: string }>;
    expect(listed.map((p) => p.id)).to.have.members([admin.id, employee.id]);
  });

  it('API keys: an employee may not give admin scopes, and sees and revokes only their own keys', async () => {
    const { knex, config } = testEnv();
    const company = await createCompany({ plan: 'premium' });
    const admin = await createPerson(company, { role: 'admin' });
    const employee = await createPerson(company, { role: 'employee' });

    const refused = await transact(knex, (uow) =>
      createApiKey({ config }, actorOf(employee), uow, { name: 'audit', scopes: ['audit:read'] }),
    ).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(ForbiddenError);

    const { row: adminKey, key } = await transact(knex, (uow) =>
      createApiKey({ config }, actorOf(admin), uow, { name: 'admin key', scopes: ['audit:read'] }),
    );
    expect(key).to.match(/^svc_live_/);
    const { row: ownKey } = await transact(knex, (uow) =>
      createApiKey({ config }, actorOf(employee), uow, { name: 'own key', scopes: ['files:read'] }),
    );
    const seen = (await apiKeysList(actorOf(employee), knex)) as Array<{ id: string }>;
    expect(seen.map((k) => k.id)).to.deep.equal([ownKey.id]);
    const notHis = await transact(knex, (uow) => revokeApiKey(actorOf(employee), uow, adminKey.id)).catch(
      (e: unknown) => e,
    );
    expect(notHis).to.be.instanceOf(NotFoundError);
    // authentication without a request (an MCP or GraphQL adapter verifies keys the same way)
    const verified = await verifyApiKey({ knex, config }, key);
    expect(verified).to.include({ apiKeyId: adminKey.id, personId: admin.id, role: 'admin' });
    expect(
      await verifyApiKey({ knex, config }, `${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`),
    ).to.equal(null);
    await transact(knex, (uow) => revokeApiKey(actorOf(admin), uow, adminKey.id));
    expect(await verifyApiKey({ knex, config }, key)).to.equal(null);
    expect(await apiKeysList(actorOf(admin), knex)).to.have.length(1);
  });
});
