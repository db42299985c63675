import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Logger } from '../../common/logger';
import { transact } from '../../db/transaction';
import { Company, OutboxEvent, Person } from '../../db/models';
import { testEnv } from '../helpers/env';

async function newCompany(name = 'Acme'): Promise<Company> {
  return Company.query(testEnv().knex).insert({ id: randomUUID(), name, status: 'active', plan: 'free' });
}

describe('transactional outbox', () => {
  it('writes the change and its event together', async () => {
    const { knex } = testEnv();
    const company = await newCompany();
    const eventId = await transact(knex, async ({ trx, emit }) => {
      await Person.scoped(company.id, trx).insert({
        email: `${randomUUID()}@a.test`,
        role: 'admin',
        status: 'active',
      });
      return emit({ companyId: company.id, type: 'quota.threshold', data: { threshold: 80 } });
    });
    const row = await OutboxEvent.query(knex).findById(eventId);
    expect(row?.type).to.equal('quota.threshold');
    expect(row?.dispatchedAt).to.equal(null);
  });

  it('leaves no event row when the change rolls back', async () => {
    const { knex } = testEnv();
    const company = await newCompany();
    let hookRan = false;
    let err: unknown;
    try {
      await transact(knex, async ({ trx, emit, afterCommit }) => {
        await emit({ companyId: company.id, type: 'file.uploaded', data: { fileId: 'f', version: 1 } });
        afterCommit(() => {
          hookRan = true;
        });
        // violates the role check: the whole transaction, event included, rolls back
        await Person.scoped(company.id, trx).insert({
          email: 'x@a.test',
          role: 'owner' as 'admin',
          status: 'active',
        });
      });
    } catch (e) {
      err = e;
    }
    expect(err).to.exist;
    expect(hookRan).to.equal(false);
    const rows = await OutboxEvent.query(knex).where({ companyId: company.id });
    expect(rows).to.have.lengthOf(0);
  });

  it('a throwing after-commit hook neither fails the committed change nor stops the next hook', async () => {
    const { knex } = testEnv();
    const company = await newCompany();
    const logged: unknown[] = [];
    const log = { error: (obj: unknown) => logged.push(obj) } as unknown as Logger;
    let nextHookRan = false;
    const eventId = await transact(
      knex,
      async ({ emit, afterCommit }) => {
        afterCommit(() => {
          throw new Error('temporal unreachable');
        });
        afterCommit(() => {
          nextHookRan = true;
        });
        return emit({ companyId: company.id, type: 'quota.threshold', data: { threshold: 80 } });
      },
      { log },
    );
    expect(await OutboxEvent.query(knex).findById(eventId)).to.exist;
    expect(nextHookRan).to.equal(true);
    expect(logged).to.have.lengthOf(1);
    expect((logged[0] as { err: Error }).err.message).to.equal('temporal unreachable');
  });

  it('a hook that never ends holds the return for the wait only; the next hook runs, a later failure is logged', async () => {
    const { knex } = testEnv();
    const company = await newCompany();
    const logged: unknown[] = [];
    const log = {
      error: (obj: unknown) => logged.push(obj),
      warn: () => undefined,
    } as unknown as Logger;
    let fail: (err: Error) => void = () => undefined;
    let nextHookRan = false;
    const started = Date.now();
    const eventId = await transact(
      knex,
      async ({ emit, afterCommit }) => {
        // e.g. a workflow start against a Temporal server that accepts connections and never answers
        afterCommit(() => new Promise<void>((_, reject) => (fail = reject)));
        afterCommit(() => {
          nextHookRan = true;
        });
        return emit({ companyId: company.id, type: 'quota.threshold', data: { threshold: 80 } });
      },
      { log, afterCommitWaitMs: 300 },
    );
    expect(Date.now() - started).to.be.below(3000);
    expect(await OutboxEvent.query(knex).findById(eventId)).to.exist;
    expect(nextHookRan).to.equal(true);
    fail(new Error('deadline exceeded'));
    await new Promise((resolve) => setImmediate(resolve));
    expect((logged[0] as { err: Error }).err.message).to.equal('deadline exceeded');
  });
});

describe('tenant scoping', () => {
  it('a scoped query never sees another company’s rows', async () => {
    const { knex } = testEnv();
    const a = await newCompany('A');
    const b = await newCompany('B');
    await Person.scoped(a.id, knex).insert({
      email: `${randomUUID()}@a.test`,
      role: 'admin',
      status: 'active',
    });
    const bob = await Person.scoped(b.id, knex).insert({
      email: `${randomUUID()}@b.test`,
      role: 'admin',
      status: 'active',
    });
    expect(bob.companyId).to.equal(b.id);
    const seenByA = await Person.scoped(a.id, knex);
    expect(seenByA.map((p) => p.companyId)).to.deep.equal([a.id]);
    expect(await Person.scoped(a.id, knex).findById(bob.id)).to.equal(undefined);
    const updated = await Person.scoped(a.id, knex).findById(bob.id).patch({ name: 'hijacked' });
    expect(updated).to.equal(0);
  });

  it('refuses an insert that names another company', async () => {
    const { knex } = testEnv();
    const a = await newCompany('A');
    const b = await newCompany('B');
    let err: unknown;
    try {
      await Person.scoped(a.id, knex).insert({
        companyId: b.id,
        email: `${randomUUID()}@x.test`,
        role: 'admin',
        status: 'active',
      });
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.include('insert into another company refused');
  });
});
