/**
 * A Temporal server that accepts connections and never answers (hung; a process stopped with SIGSTOP did
 * this): requests whose change starts a workflow after commit answer at once all the same.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { expect } from 'chai';
import { createApp } from '../../api/app';
import { call } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { csv, uploadFile, uploadTo } from '../helpers/files';

describe('Temporal hanging after a commit', function () {
  this.timeout(60_000);

  it('a rebuild and a requested comparison answer 202 within seconds, queued for the sweep', async () => {
    const env = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const up = await uploadFile(csv(3), { token: a.adminToken });
    const id = up.body.id as string;
    expect((await uploadTo(`/files/${id}/versions`, csv(4), { token: a.adminToken })).status).to.equal(201);
    // version 1's report has been built (no worker here: its row as a build leaves it)
    await env.knex('reports').insert({
      id: randomUUID(),
      companyId: a.company.id,
      fileId: id,
      fileVersionId: up.body.version.id,
      version: 1,
      status: 'ready',
      build: 1,
    });
    // every workflow start waits for an answer that never comes
    const starts: string[] = [];
    const workflow = Object.create(env.temporal.workflow, {
      start: {
        value: (type: string) => {
          starts.push(type);
          return new Promise(() => undefined);
        },
      },
    }) as Client['workflow'];
    const temporal = Object.create(env.temporal, { workflow: { value: workflow } }) as Client;
    const server = http.createServer(createApp({ ...env.deps, temporal }).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const started = Date.now();
      const [rebuild, comparison] = await Promise.all([
        call('POST', `/files/${id}/versions/1/report/rebuild`, { token: a.adminToken, baseUrl }),
        call('POST', '/comparisons', {
          token: a.adminToken,
          baseUrl,
          json: { base: { fileId: id, version: 1 }, target: { fileId: id, version: 2 } },
        }),
      ]);
      expect(Date.now() - started).to.be.below(15_000);
      expect(rebuild.status, rebuild.text).to.equal(202);
      expect(rebuild.body).to.include({ status: 'queued', build: 2 });
      expect(comparison.status, comparison.text).to.equal(202);
      expect(comparison.body).to.include({ status: 'queued' });
      expect(starts.sort()).to.deep.equal(['comparisonWorkflow', 'reportWorkflow']);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    // saved and queued: the file sweep starts them five minutes on (test/domain/files/sweep.test.ts)
    expect(await env.knex('reports').where({ fileId: id, version: 1 }).first()).to.include({
      status: 'queued',
      build: 2,
    });
    expect(await env.knex('comparisons').where({ fileId: id, automatic: false })).to.have.lengthOf(1);
  });
});
