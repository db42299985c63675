/** changeWithAudit (domain/audit/record.ts): a one-statement change carries its audit entry in that statement. */
import { expect } from 'chai';
import { auditWrites, recordAudit } from '../../../domain/audit/record';
import { changeVisibility } from '../../../domain/files/files';
import { createKnex } from '../../../db/knex';
import { transact } from '../../../db/transaction';
import { testEnv } from '../../helpers/env';
import { createTeam } from '../../helpers/factories';
import { countAppQueries, insertCompanyFile } from '../../helpers/graphql';

describe('audit: the entry travels with its change', () => {
  it('a visibility change writes its entry in the same statement (no statement of its own), and a rollback removes both', async () => {
    const { appKnex, knex } = testEnv();
    const team = await createTeam();
    const { fileId } = await insertCompanyFile(team, 1, 1);
    const actor = { companyId: team.company.id, personId: team.admin.id, role: 'admin' as const };
    const change = (to: 'private' | 'company') =>
      countAppQueries(() =>
        transact(appKnex, (uow) => changeVisibility(actor, uow, fileId, to), {
          acting: { companyId: team.company.id },
        }),
      );
    const entries = () =>
      knex('auditLog').where({ companyId: team.company.id, action: 'file.visibility_changed' });

    // the same change (to private) with and without the entry: the same number of statements
    const withEntry = await change('private');
    expect(withEntry.result.visibility).to.equal('private');
    expect(await entries()).to.have.length(1);
    await change('company');
    expect(await entries()).to.have.length(2);
    auditWrites.enabled = false;
    let without;
    try {
      without = await change('private');
    } finally {
      auditWrites.enabled = true;
    }
    expect(without.result.visibility).to.equal('private');
    expect(await entries()).to.have.length(2);
    expect(withEntry.count).to.be.greaterThan(0); // the change's statements are counted
    expect(withEntry.count).to.equal(without.count);
    await change('company');

    // a failure after the change in the same unit of work: neither the change nor its entry remains
    await transact(
      appKnex,
      async (uow) => {
        await changeVisibility(actor, uow, fileId, 'private');
        throw new Error('after the change');
      },
      { acting: { companyId: team.company.id } },
    ).catch((err: Error) => expect(err.message).to.equal('after the change'));
    expect((await knex('files').where({ id: fileId }).first()).visibility).to.equal('company');
    expect(await entries()).to.have.length(3);
  });

  it('audited writes run as named (prepared) statements: parsed once per connection, the entry as its row says', async () => {
    const { appKnex, knex } = testEnv();
    const team = await createTeam();
    const { fileId } = await insertCompanyFile(team, 1, 1);
    const actor = { companyId: team.company.id, personId: team.admin.id, role: 'admin' as const };
    const prepared = await transact(
      appKnex,
      async (uow) => {
        await recordAudit(uow.trx, {
          companyId: team.company.id,
          personId: team.admin.id,
          action: 'file.prepared_probe',
          resourceType: 'file',
          resourceId: fileId,
          details: { n: 1 },
        });
        await changeVisibility(actor, uow, fileId, 'private');
        // the statements this connection has prepared so far (its session's)
        const rows = (await uow.trx.raw('select name from pg_prepared_statements')).rows as Array<{
          name: string;
        }>;
        return rows.map((r) => r.name);
      },
      { acting: { companyId: team.company.id } },
    );
    expect(prepared).to.include('audit_log.insert');
    expect(prepared.some((name) => name.startsWith('audit_log.change.'))).to.equal(true);
    const entry = await knex('auditLog')
      .where({ companyId: team.company.id, action: 'file.prepared_probe' })
      .first();
    expect(entry).to.include({ resourceType: 'file', resourceId: fileId, actorPersonId: team.admin.id });
    expect(entry.details).to.deep.equal({ n: 1 });
    // entry ids are time-ordered (UUIDv7): the version nibble is 7
    expect(entry.id[14]).to.equal('7');
  });

  it('a changed table (a migration while the service runs) fails one prepared change, and the next is prepared anew', async () => {
    const { knex, config } = testEnv();
    // one connection, so the change after the migration meets the statement that connection prepared
    const oneConnection = createKnex(config.databaseUrl, 1, { actAs: config.databaseAppRole });
    const team = await createTeam();
    const { fileId } = await insertCompanyFile(team, 1, 1);
    const actor = { companyId: team.company.id, personId: team.admin.id, role: 'admin' as const };
    const change = (to: 'private' | 'company') =>
      transact(oneConnection, (uow) => changeVisibility(actor, uow, fileId, to), {
        acting: { companyId: team.company.id },
      });
    try {
      await change('private');
      await knex.raw('alter table files add column prepared_probe integer');
      try {
        // the prepared `select *` now has another column: PostgreSQL refuses it once, the change rolls back
        const refused = await change('company').then(
          () => null,
          (err: { code?: string }) => err,
        );
        expect(refused?.code).to.equal('0A000');
        expect((await knex('files').where({ id: fileId }).first()).visibility).to.equal('private');
        // the next change takes a new statement name: prepared anew, it goes through, with its entry
        const updated = await change('company');
        expect(updated.visibility).to.equal('company');
      } finally {
        await knex.raw('alter table files drop column prepared_probe');
      }
      // and once more after the column went away again: refused once, then prepared anew
      const again = await change('private').then(
        () => null,
        (err: { code?: string }) => err,
      );
      expect(again?.code).to.equal('0A000');
      expect((await change('private')).visibility).to.equal('private');
      const entries = await knex('auditLog').where({
        companyId: team.company.id,
        action: 'file.visibility_changed',
      });
      expect(entries.length).to.be.at.least(3);
    } finally {
      await oneConnection.destroy();
    }
  });
});
