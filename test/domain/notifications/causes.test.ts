/**
 * Every notification kind (domain/notifications/kinds.ts) from its real cause, each in the transaction of
 * the cause, to the documented recipients, with ids and numbers only; and once per cause: a retried
 * activity or a second call for the same cause writes nothing more.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { NOTIFICATION_KIND_NAMES, type NotificationKind } from '../../../domain/notifications/kinds';
import { notify, notifyInvoiceFinalized } from '../../../domain/notifications/notify';
import { failBuild } from '../../../domain/reports/build';
import { disableAutomatically } from '../../../domain/webhooks/state';
import { transact } from '../../../db/transaction';
import { startWorker, testEnv } from '../../helpers/env';
import { createPerson, createTeam } from '../../helpers/factories';
import { call } from '../../helpers/http';
import { csv, uploadFile } from '../../helpers/files';
import { tokenFromMail } from '../../helpers/mailbox';
import { eventually } from '../../helpers/temporal';
import { notificationsOfPerson } from '../../helpers/collab';

const covered = new Set<NotificationKind>();
function proves(kind: NotificationKind) {
  covered.add(kind);
  return kind;
}

async function upload(token: string, data: string, visibility = 'private') {
  const res = await uploadFile(data, { token, visibility });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

describe('notification kinds from their causes', function () {
  this.timeout(180_000);

  after(() => {
    // every documented kind has its case above
    expect([...covered].sort()).to.deep.equal([...NOTIFICATION_KIND_NAMES].sort());
  });

  it('comment.on_your_file and comment.mention (test/api/comments.test.ts has the rules)', async () => {
    const team = await createTeam({ plan: 'premium' });
    const fileId = await upload(team.employeeToken, csv(2), 'company');
    const res = await call('POST', `/files/${fileId}/comments`, {
      token: team.adminToken,
      json: { body: 'hi' },
    });
    const other = await call('POST', `/files/${fileId}/comments`, {
      token: team.adminToken,
      json: { body: `cc @${team.employee.email}` },
    });
    expect((await notificationsOfPerson(team.employee.id)).map((n) => [n.kind, n.resourceId])).to.deep.equal([
      [proves('comment.on_your_file'), res.body.id],
      [proves('comment.mention'), other.body.id],
    ]);
  });

  it('report.ready, rules.failed and sensitive_data.found from a real build; report.failed once per build', async () => {
    const worker = await startWorker();
    try {
      const team = await createTeam({ plan: 'premium' });
      const secondAdmin = await createPerson(team.company, { role: 'admin' });
      const rule = await call('POST', '/rules', {
        token: team.adminToken,
        json: { name: 'email present', kind: 'not_null', column: 'email' },
      });
      expect(rule.status, rule.text).to.equal(201);
      const data = ['id,email', '1,anna.smith@example.com', '2,', '3,li.chen@example.org'].join('\n');
      const fileId = await upload(team.employeeToken, data, 'private');
      const kinds = ['report.ready', 'rules.failed', 'sensitive_data.found'];
      const mine = await eventually(
        async () => {
          const rows = (await notificationsOfPerson(team.employee.id)).filter(
            (n) => n.data.fileId === fileId,
          );
          return kinds.every((k) => rows.some((n) => n.kind === k)) ? rows : undefined;
        },
        { what: 'the build’s notifications', timeoutMs: 90_000 },
      );
      const byKind = Object.fromEntries(mine.map((n) => [n.kind, n.data]));
      const report = (await testEnv().knex('reports').where({ fileId }).first()) as { id: string };
      expect(byKind[proves('report.ready')]).to.deep.equal({ fileId, version: 1, reportId: report.id });
      expect(byKind[proves('rules.failed')]).to.deep.include({ fileId, version: 1, failedRuleCount: 1 });
      expect(byKind[proves('sensitive_data.found')]).to.deep.equal({ fileId, version: 1, columnCount: 1 });
      expect(mine).to.have.length(3);
      // sensitive data: the admins too (the file is private: they see every file); rules: the uploader only
      for (const admin of [team.admin.id, secondAdmin.id]) {
        const theirs = (await notificationsOfPerson(admin)).filter((n) => n.data.fileId === fileId);
        expect(theirs.map((n) => n.kind)).to.deep.equal(['sensitive_data.found']);
      }
      // no cell value anywhere
      const text = JSON.stringify(
        await testEnv().knex('notifications').where({ companyId: team.company.id }),
      );
      expect(text).to.not.match(/anna|li\.chen|example\.(com|org)/);

      // report.failed: the build failing for good, twice (a retried activity) → one notification
      const version = (await testEnv().knex('fileVersions').where({ fileId }).first()) as { id: string };
      await testEnv()
        .knex('reports')
        .where({ fileId })
        .update({ status: 'building', build: 2, finishedAt: null });
      const req = { companyId: team.company.id, fileId, fileVersionId: version.id, version: 1, build: 2 };
      const { appKnex } = testEnv();
      expect(await failBuild(appKnex, req, 'unparsable_file', 'test')).to.deep.equal({ status: 'failed' });
      expect(await failBuild(appKnex, req, 'unparsable_file', 'test')).to.deep.equal({ status: 'failed' });
      const failed = (await notificationsOfPerson(team.employee.id, proves('report.failed'))).filter(
        (n) => n.data.fileId === fileId,
      );
      expect(failed.map((n) => n.data)).to.deep.equal([
        { fileId, version: 1, reportId: report.id, reason: 'unparsable_file' },
      ]);
    } finally {
      await worker.stop();
    }
  });

  it('quota.threshold: the admins, once per threshold and period', async () => {
    const team = await createTeam({ plan: 'free' });
    for (let i = 0; i < 9; i++) await upload(team.employeeToken, csv(2, 3, `q${i}`));
    const admin = await notificationsOfPerson(team.admin.id, proves('quota.threshold'));
    expect(admin.map((n) => n.data.threshold)).to.deep.equal([80]);
    expect(admin[0].data).to.deep.include({ filesUsed: 8, filesLimit: 10 });
    expect(await notificationsOfPerson(team.employee.id, 'quota.threshold')).to.deep.equal([]);
  });

  it('webhook_endpoint.disabled: the admins, with the reason; a second disable of a disabled endpoint writes nothing', async () => {
    const team = await createTeam({ plan: 'premium' });
    const created = await call('POST', '/outgoing-webhooks', {
      token: team.adminToken,
      json: { name: 'x', url: 'https://93.184.216.34/hook', events: ['file.uploaded'] },
    });
    const endpoint = { id: created.body.id as string, companyId: team.company.id };
    const { appKnex, logger } = testEnv();
    for (let i = 0; i < 2; i++) {
      await transact(appKnex, ({ trx }) => disableAutomatically(trx, logger, endpoint, 'receiver_gone', {}), {
        acting: { system: 'webhook-delivery' },
      });
    }
    const admin = await notificationsOfPerson(team.admin.id, proves('webhook_endpoint.disabled'));
    expect(admin.map((n) => n.data)).to.deep.equal([{ endpointId: endpoint.id, reason: 'receiver_gone' }]);
    expect(await notificationsOfPerson(team.employee.id)).to.deep.equal([]);
  });

  it('invitation.accepted: the person who invited', async () => {
    const team = await createTeam({ plan: 'premium' });
    const email = `invited-${randomUUID().slice(0, 8)}@example.test`;
    const invited = await call('POST', '/invitations', {
      token: team.adminToken,
      json: { email, role: 'employee' },
    });
    const token = await tokenFromMail(email, /invited/);
    const accepted = await call('POST', '/auth/accept-invite', {
      json: { token, password: 'my own password' },
    });
    expect(accepted.status, accepted.text).to.equal(200);
    const rows = await notificationsOfPerson(team.admin.id, proves('invitation.accepted'));
    expect(rows.map((n) => n.data)).to.deep.equal([{ personId: invited.body.id }]);
  });

  it('invoice.finalized: the admins, once per invoice (billing calls notifyInvoiceFinalized)', async () => {
    const team = await createTeam({ plan: 'premium' });
    const invoice = {
      companyId: team.company.id,
      invoiceId: randomUUID(),
      totalCents: 4900,
      periodStart: '2026-10-01',
      periodEnd: '2026-10-31',
    };
    const { appKnex } = testEnv();
    const written = [];
    for (let i = 0; i < 2; i++)
      written.push(
        await transact(appKnex, (uow) => notifyInvoiceFinalized(uow, invoice), {
          acting: { companyId: team.company.id },
        }),
      );
    expect(written).to.deep.equal([1, 0]);
    const rows = await notificationsOfPerson(team.admin.id, proves('invoice.finalized'));
    expect(rows.map((n) => n.data)).to.deep.equal([
      { invoiceId: invoice.invoiceId, totalCents: 4900, periodStart: '2026-10-01', periodEnd: '2026-10-31' },
    ]);
    expect(await notificationsOfPerson(team.employee.id)).to.deep.equal([]);
  });

  it('is written in the transaction of its cause: rolled back with it', async () => {
    const team = await createTeam({ plan: 'premium' });
    const { appKnex } = testEnv();
    let failed = false;
    try {
      await transact(
        appKnex,
        async (uow) => {
          await notify(uow, {
            companyId: team.company.id,
            kind: 'quota.threshold',
            to: { admins: true },
            resource: { type: 'company', id: team.company.id },
            data: { threshold: 100 },
            cause: 'rolled-back',
          });
          throw new Error('the cause fails');
        },
        { acting: { companyId: team.company.id } },
      );
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
    expect(await notificationsOfPerson(team.admin.id)).to.deep.equal([]);
  });
});
