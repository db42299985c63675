import { Readable } from 'node:stream';
import { expect } from 'chai';
import { mapError } from '../../../api/middlewares/errors';
import { NotFoundError } from '../../../common/errors';
import { transact } from '../../../db/transaction';
import type { FileActor } from '../../../domain/files/access';
import { changeVisibility, getFile, listVersions, type FilesDeps } from '../../../domain/files/files';
import { uploadFile } from '../../../domain/files/upload';
import { PlanLimitError, PlanRequiredError, QuotaExceededError } from '../../../domain/plans/errors';
import { periodKey, PLANS } from '../../../domain/plans/plans';
import { testEnv } from '../../helpers/env';
import { createTeam } from '../../helpers/factories';
import { csv, objectsOf } from '../../helpers/files';

/** What a promise rejected with (undefined when it resolved). */
const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

/** The files domain called as an MCP tool or a script would: no Koa context, no HTTP request. */
describe('files domain without HTTP (upload command, visibility, typed plan errors)', function () {
  this.timeout(30_000);

  function deps(): FilesDeps {
    const { knex, storage, config, temporal, logger } = testEnv();
    return { knex, storage, config, temporal, log: logger };
  }

  async function team(plan: 'free' | 'basic' | 'premium' | null) {
    const t = await createTeam({ plan });
    const actor = (person: { id: string }, role: 'admin' | 'employee'): FileActor => ({
      companyId: t.company.id,
      personId: person.id,
      role,
      companyPlan: plan,
    });
    return { ...t, admin: actor(t.admin, 'admin'), employee: actor(t.employee, 'employee') };
  }

  it('uploads a buffer and a stream as versions 1 and 2, with the rows, event and audit of an HTTP upload', async () => {
    const { knex } = testEnv();
    const a = await team('basic');
    const first = await uploadFile(deps(), a.employee, { fileName: 'a.csv', content: Buffer.from(csv(3)) });
    expect(first.version).to.include({ version: 1, format: 'csv', rowCount: 3, columnCount: 3 });
    expect(first.file).to.include({ visibility: 'private', uploadedByPersonId: a.employee.personId });
    const second = await uploadFile(deps(), a.employee, {
      fileId: first.file.id,
      fileName: 'a.csv',
      content: Readable.from([Buffer.from(csv(5))]),
    });
    expect(second.version).to.include({ version: 2, rowCount: 5 });
    expect(await objectsOf(a.company.id)).to.have.lengthOf(2);
    const events = await knex('outbox').where({ companyId: a.company.id, type: 'file.uploaded' });
    expect(events).to.have.lengthOf(2);
    const audit = await knex('auditLog').where({ companyId: a.company.id, resourceId: first.file.id });
    expect(audit.map((r: { action: string }) => r.action).sort()).to.deep.equal([
      'file.uploaded',
      'file.version_uploaded',
    ]);
    const { versions } = await listVersions(a.employee, knex, first.file.id);
    expect((await versions).map((v) => v.version)).to.deep.equal([2, 1]);
  });

  it('applies the visibility rule: another employee does not see a private file until it is made company-wide', async () => {
    const { knex } = testEnv();
    const a = await team('basic');
    const saved = await uploadFile(deps(), a.admin, { fileName: 'p.csv', content: Buffer.from(csv(1)) });
    expect(await rejection(getFile(a.employee, knex, saved.file.id))).to.be.instanceOf(NotFoundError);
    // nor can they upload a version of it
    const version = uploadFile(deps(), a.employee, {
      fileId: saved.file.id,
      fileName: 'p.csv',
      content: Buffer.from(csv(1)),
    });
    expect(await rejection(version)).to.be.instanceOf(NotFoundError);
    await transact(knex, (uow) => changeVisibility(a.admin, uow, saved.file.id, 'company'));
    expect((await getFile(a.employee, knex, saved.file.id)).id).to.equal(saved.file.id);
    // another company never sees it
    const b = await team('basic');
    expect(await rejection(getFile(b.admin, knex, saved.file.id))).to.be.instanceOf(NotFoundError);
  });

  it('refuses with typed plan errors (no HTTP status inside), which the API maps to 402 and 409', async () => {
    const { knex } = testEnv();
    const none = await team(null);
    const noPlan = uploadFile(deps(), none.admin, { fileName: 'x.csv', content: Buffer.from(csv(1)) });
    expect(await rejection(noPlan)).to.be.instanceOf(PlanRequiredError);

    const free = await team('free');
    await knex('fileUsage').insert({
      companyId: free.company.id,
      periodKey: periodKey(),
      filesUsed: PLANS.free.filesPerPeriod,
    });
    const overQuota = await rejection(
      uploadFile(deps(), free.admin, { fileName: 'x.csv', content: Buffer.from(csv(1)) }),
    );
    expect(overQuota).to.be.instanceOf(QuotaExceededError);
    expect(overQuota).to.include({ plan: 'free', periodKey: periodKey() });
    expect(mapError(overQuota).status).to.equal(402);
    expect(mapError(new PlanRequiredError()).status).to.equal(402);
    expect(mapError(new PlanLimitError('the plan keeps at most 5 versions')).status).to.equal(409);
    // nothing was kept of the refused uploads
    expect(await objectsOf(free.company.id)).to.have.lengthOf(0);
    expect(await objectsOf(none.company.id)).to.have.lengthOf(0);
  });
});
