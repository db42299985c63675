/** changeWithAudit (domain/audit/record.ts): a one-statement change carries its audit entry in that statement. */
import { expect } from 'chai';
import { auditWrites } from '../../../domain/audit/record';
import { changeVisibility } from '../../../domain/files/files';
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
});
