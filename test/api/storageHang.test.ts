/** A MinIO that accepts connections and never answers: requests end with the error body, nothing is held. */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createApp } from '../../api/app';
import { s3Client } from '../../common/storage';
import { call, expectErrorBody } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { csv, footprint, uploadFile, uploadTo } from '../helpers/files';

describe('storage: a MinIO that never answers', function () {
  this.timeout(60_000);

  it('an upload, a preview and a comparison with key columns answer 500 after the answer timeout, holding no transaction', async () => {
    const env = testEnv();
    const a = await createTeam({ plan: 'premium' });
    const up = await uploadFile(csv(3), { token: a.adminToken });
    expect(up.status, up.text).to.equal(201);
    const id = up.body.id as string;
    expect((await uploadTo(`/files/${id}/versions`, csv(4), { token: a.adminToken })).status).to.equal(201);
    const before = await footprint(a.company.id);

    // accepts every connection, reads what is sent, never answers
    const held = new Set<net.Socket>();
    const hole = net.createServer((socket) => {
      held.add(socket);
      socket.on('error', () => undefined);
      socket.resume();
    });
    await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(hole.address() as AddressInfo).port}`;
    const storage = { ...env.storage, client: s3Client(env.config, endpoint, 1000) };
    const server = http.createServer(createApp({ ...env.deps, storage }).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const within = async (p: Promise<Awaited<ReturnType<typeof call>>>) => {
      const started = Date.now();
      const res = await p;
      expect(Date.now() - started).to.be.below(10_000);
      return res;
    };
    try {
      const answers = await Promise.all([
        within(uploadFile(csv(3), { token: a.adminToken, baseUrl })),
        within(call('GET', `/files/${id}/versions/1/preview`, { token: a.adminToken, baseUrl })),
        within(
          call('POST', '/comparisons', {
            token: a.adminToken,
            baseUrl,
            json: {
              base: { fileId: id, version: 1 },
              target: { fileId: id, version: 2 },
              keyColumns: ['col1'],
            },
          }),
        ),
      ]);
      for (const res of answers) expect(expectErrorBody(res, 500).message).to.equal('internal server error');
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => hole.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(await footprint(a.company.id)).to.deep.equal(before);
    expect(await env.knex('comparisons').where({ fileId: id, automatic: false })).to.deep.equal([]);
    const open = await env.knex.raw(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`,
    );
    expect(open.rows[0].n).to.equal(0);
  });
});
