import { expect } from 'chai';
import type { Knex } from 'knex';
import { endSessionsOf } from '../../domain/identity/sessions';
import { voidOneTimeTokens } from '../../domain/identity/oneTimeTokens';
import { createApiKey, createCompany, createPerson, createTeam, signIn } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { untilLockWaiters } from '../helpers/locks';
import { call, expectErrorBody } from '../helpers/http';
import { mailsTo, tokenFromMail } from '../helpers/mailbox';

const patchPerson = (adminToken: string, id: string, json: Record<string, string>) =>
  call('PATCH', `/employees/${id}`, { token: adminToken, json });

/**
 * Signs `person` in while `hold` (a change of the person, left uncommitted) holds its locks: waits (bounded)
 * until the sign-in is parked on a lock or answered, then commits the change, and gives the sign-in's answer.
 */
async function signInDuring(
  knex: Knex,
  person: { email: string; password: string },
  hold: (trx: Knex.Transaction) => Promise<void>,
): Promise<{ status: number; body: { accessToken?: string } }> {
  const trx = await knex.transaction();
  let login: Promise<{ status: number; body: { accessToken?: string } }> | undefined;
  try {
    await hold(trx);
    let answered = false;
    login = call('POST', '/auth/login', { json: { email: person.email, password: person.password } }).then(
      (r) => {
        answered = true;
        return r;
      },
    );
    await untilLockWaiters(knex, 1, () => answered);
    await trx.commit();
  } catch (err) {
    await trx.rollback();
    throw err;
  }
  return login;
}

describe('sessions end when a person loses access (issue 10, item 11)', () => {
  it('disabling ends every session: old access and refresh tokens stay refused after re-enabling', async () => {
    const team = await createTeam({ plan: 'basic' });
    const { employee, adminToken } = team;
    const sessions = [await signIn(employee), await signIn(employee)];
    const key = await createApiKey(employee, ['files:read']);
    const other = await signIn(team.admin);

    expect((await patchPerson(adminToken, employee.id, { status: 'disabled' })).status).to.equal(200);
    expect((await patchPerson(adminToken, employee.id, { status: 'active' })).status).to.equal(200);

    expectErrorBody(await call('GET', '/_test/whoami', { token: team.employeeToken }), 401);
    for (const pair of sessions) {
      // the access token is well within its 15 minutes, the refresh token within its 30 days
      expectErrorBody(await call('GET', '/_test/whoami', { token: pair.accessToken }), 401);
      expectErrorBody(
        await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } }),
        401,
      );
    }
    // the admin's own session is untouched; the person signs in again; API keys follow the person's status
    expect((await call('GET', '/_test/whoami', { token: other.accessToken })).status).to.equal(200);
    const again = await call('POST', '/auth/login', {
      json: { email: employee.email, password: employee.password },
    });
    expect(again.status).to.equal(200);
    expect((await call('GET', '/_test/whoami', { token: again.body.accessToken })).status).to.equal(200);
    expect((await call('GET', '/_test/whoami', { token: key })).status).to.equal(200);

    // audited: one session.ended per session with the reason, by the admin, and the change itself
    const { knex } = testEnv();
    const ended = (await knex('auditLog')
      .where({ companyId: employee.companyId, action: 'session.ended' })
      .whereRaw(`details->>'reason' = 'person_disabled'`)
      .select('actorPersonId as personId', 'resourceId')) as Array<{ personId: string; resourceId: string }>;
    // createTeam's session of the employee, and the two above
    expect(ended.map((e) => e.personId)).to.deep.equal([team.admin.id, team.admin.id, team.admin.id]);
    const open = (await knex('sessions').where({ personId: employee.id }).whereNull('endedAt')) as unknown[];
    expect(open).to.have.lengthOf(1); // the new sign-in only
    const updated = (await knex('auditLog')
      .where({ resourceId: employee.id, action: 'person.updated' })
      .orderBy('createdAt')
      .first()) as { details: { endedSessions?: number } };
    expect(updated.details.endedSessions).to.equal(3);
  });

  it('a password reset token mailed before the disable does not work after re-enabling', async () => {
    const team = await createTeam({ plan: 'basic' });
    expect(
      (await call('POST', '/auth/forgot-password', { json: { email: team.employee.email } })).status,
    ).to.equal(202);
    const token = await tokenFromMail(team.employee.email, /Reset/);
    await patchPerson(team.adminToken, team.employee.id, { status: 'disabled' });
    await patchPerson(team.adminToken, team.employee.id, { status: 'active' });
    expectErrorBody(
      await call('POST', '/auth/reset-password', { json: { token, password: 'a brand new password' } }),
      401,
    );
  });

  it('a reset link asked for while the person is being disabled does not survive the disable', async () => {
    const { knex } = testEnv();
    const company = await createCompany();
    const admin = await createPerson(company);
    const person = await createPerson(company, { role: 'employee' });
    // the disable as PATCH /employees/{id} makes it (person locked, status changed, sessions ended, reset
    // links voided), held open while the person asks for a reset link: the request reads the committed
    // (active) person; it must wait for the disable and then send nothing, not issue a link the disable
    // never saw
    const trx = await knex.transaction();
    let forgot: Promise<{ status: number }> | undefined;
    try {
      await trx('people').where({ id: person.id }).forUpdate().first();
      await trx('people').where({ id: person.id }).update({ status: 'disabled' });
      await endSessionsOf(trx, person.id, 'person_disabled', { companyId: company.id, personId: admin.id });
      await voidOneTimeTokens(trx, person.id, 'password_reset');
      let answered = false;
      forgot = call('POST', '/auth/forgot-password', { json: { email: person.email } }).then((r) => {
        answered = true;
        return r;
      });
      await untilLockWaiters(knex, 1, () => answered);
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    expect((await forgot).status).to.equal(202);
    const live = (await knex('oneTimeTokens')
      .where({ personId: person.id, purpose: 'password_reset' })
      .whereNull('usedAt')) as unknown[];
    expect(live, 'reset links alive after the disable').to.have.lengthOf(0);
    // re-enabled, the person has no working link from before (README: re-enabling brings no old token back)
    await knex('people').where({ id: person.id }).update({ status: 'active' });
    const mail = mailsTo(person.email).find((m) => /Reset/.test(m.subject));
    if (mail) {
      const token = /^token: ([A-Za-z0-9_-]+)\s*$/m.exec(mail.text)?.[1] ?? '';
      expectErrorBody(
        await call('POST', '/auth/reset-password', { json: { token, password: 'a brand new password' } }),
        401,
      );
    }
  });

  it('two reset links asked for at once: only the newest works', async () => {
    const { knex } = testEnv();
    const company = await createCompany();
    const person = await createPerson(company, { role: 'employee' });
    // a change of the person held open (e.g. an admin changing the role) parks both requests; released,
    // the second must void the first's link as a sequential request would
    const trx = await knex.transaction();
    let answers: Promise<Array<{ status: number }>> | undefined;
    try {
      await trx('people').where({ id: person.id }).forUpdate().first();
      let answered = 0;
      const ask = () =>
        call('POST', '/auth/forgot-password', { json: { email: person.email } }).then((r) => {
          answered++;
          return r;
        });
      answers = Promise.all([ask(), ask()]);
      // bounded: both parked on a lock (the fix) or both answered (the defect)
      await untilLockWaiters(knex, 2, () => answered >= 2);
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    expect((await answers).map((a) => a.status)).to.deep.equal([202, 202]);
    const live = (await knex('oneTimeTokens')
      .where({ personId: person.id, purpose: 'password_reset' })
      .whereNull('usedAt')) as unknown[];
    expect(live, 'reset links alive').to.have.lengthOf(1);
  });

  it('a refresh racing the removal of its person: neither deadlocks, the removal wins', async () => {
    const { knex } = testEnv();
    const team = await createTeam({ plan: 'basic' });
    const pair = await signIn(team.employee);
    // A share lock on refresh_tokens parks the refresh once it has read (and locked) its token, before it
    // rotates it: where a refresh is when the removal starts, now and then. The removal (DELETE
    // /employees/{id}) then runs; released, the two go on from there.
    const trx = await knex.transaction();
    let answered = 0;
    const count = <T>(p: Promise<T>) => p.then((r) => (answered++, r));
    let refresh: Promise<{ status: number; text: string }> | undefined;
    let removal: Promise<{ status: number; text: string }> | undefined;
    try {
      await trx.raw('lock table refresh_tokens in share mode');
      refresh = count(call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } }));
      await untilLockWaiters(knex, 1, () => answered > 0);
      removal = count(call('DELETE', `/employees/${team.employee.id}`, { token: team.adminToken }));
      await untilLockWaiters(knex, 2, () => answered > 1);
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    const [refreshed, removed] = await Promise.all([refresh, removal]);
    expect(removed.status, removed.text).to.equal(204);
    expect([200, 401], refreshed.text).to.include(refreshed.status);
    if (refreshed.status === 200) {
      // begun before the removal: its tokens went with the person
      const body = JSON.parse(refreshed.text) as { accessToken: string; refreshToken: string };
      expectErrorBody(await call('GET', '/_test/whoami', { token: body.accessToken }), 401);
      expectErrorBody(
        await call('POST', '/auth/refresh', { json: { refreshToken: body.refreshToken } }),
        401,
      );
    }
    expect(await knex('people').where({ id: team.employee.id })).to.have.lengthOf(0);
  });

  it('a reused refresh token presented several times at once: each 401, none a deadlock', async () => {
    const team = await createTeam({ plan: 'basic' });
    const pair = await signIn(team.employee);
    const rotated = await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } });
    expect(rotated.status).to.equal(200);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } }),
      ),
    );
    expect(answers.map((a) => a.status)).to.deep.equal([401, 401, 401, 401, 401, 401]);
    expectErrorBody(
      await call('POST', '/auth/refresh', { json: { refreshToken: rotated.body.refreshToken } }),
      401,
    );
  });

  it('a sign-in that verified the password while the person was being disabled gets no session', async () => {
    const { knex } = testEnv();
    const company = await createCompany();
    const admin = await createPerson(company);
    const person = await createPerson(company, { role: 'employee' });
    // the disable, as PATCH /employees/{id} makes it, held open: status changed, sessions ended, not committed;
    // the sign-in reads the committed (active) person, verifies the password, then either waits for the
    // disable to commit (the fix) or finishes at once (the defect)
    const answer = await signInDuring(knex, person, async (trx) => {
      await trx('people').where({ id: person.id }).forUpdate().first();
      await trx('people').where({ id: person.id }).update({ status: 'disabled' });
      await endSessionsOf(trx, person.id, 'person_disabled', { companyId: company.id, personId: admin.id });
    });
    await knex('people').where({ id: person.id }).update({ status: 'active' });
    if (answer.status === 200) {
      // a session begun for a person being disabled must not come back with re-enabling
      expectErrorBody(await call('GET', '/_test/whoami', { token: answer.body.accessToken }), 401);
    } else {
      expect(answer.status).to.equal(403);
    }
    const open = (await knex('sessions').where({ personId: person.id }).whereNull('endedAt')) as unknown[];
    expect(open).to.have.lengthOf(0);
  });

  it('a sign-in with the old password racing a password reset gets no session', async () => {
    const { knex } = testEnv();
    const company = await createCompany();
    const person = await createPerson(company);
    const answer = await signInDuring(knex, person, async (trx) => {
      await trx('people').where({ id: person.id }).update({ passwordHash: 'changed' });
      await endSessionsOf(trx, person.id, 'password_reset', { companyId: company.id, personId: person.id });
    });
    expect(answer.status).to.equal(401);
    const open = (await knex('sessions').where({ personId: person.id }).whereNull('endedAt')) as unknown[];
    expect(open).to.have.lengthOf(0);
  });
});
