/**
 * A comparison's row changes are written in batches, each under one lock on the comparison's row (migration
 * 20261123001410: no per-row foreign keys). A comparison deleted while its changes are being written (its file
 * deleted) ends as `file_deleted` and leaves no change behind; deleting a comparison deletes its changes.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { actingStatement } from '../../db/unitOfWork';
import { runComparison } from '../../domain/comparisons/run';
import { runBuild } from '../../domain/reports/build';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { uploadFile, uploadTo } from '../helpers/files';
import { insertCompanyFile } from '../helpers/graphql';
import { eventually } from '../helpers/temporal';

/** `rows` rows, every one changed between the two versions (one change each) */
function versions(rows: number): [string, string] {
  const lines = (v: number) =>
    ['id,name,qty', ...Array.from({ length: rows }, (_, i) => `${i + 1},name ${i},${i * 10 + v}`)].join('\n');
  return [lines(1), lines(2)];
}

describe('comparison changes: written in batches under one lock on the comparison', function () {
  this.timeout(120_000);

  async function requested(rows: number) {
    const team = await createTeam({ plan: 'premium' });
    const [v1, v2] = versions(rows);
    const up = await uploadFile(v1, { token: team.adminToken });
    expect(up.status, up.text).to.equal(201);
    const fileId = up.body.id as string;
    const second = await uploadTo(`/files/${fileId}/versions`, v2, { token: team.adminToken });
    expect(second.status, second.text).to.equal(201);
    const { knex } = testEnv();
    const ids = (await knex('fileVersions').where({ fileId }).orderBy('version').select('id')) as Array<{
      id: string;
    }>;
    const comparisonId = randomUUID();
    await knex('comparisons').insert({
      id: comparisonId,
      companyId: team.company.id,
      fileId,
      baseVersionId: ids[0].id,
      targetVersionId: ids[1].id,
      baseVersion: 1,
      targetVersion: 2,
      automatic: false,
      keyColumns: JSON.stringify(['id']),
      status: 'queued',
    });
    const { appKnex, storage, config } = testEnv();
    const run = () =>
      actingStatement({ companyId: team.company.id }, () =>
        runComparison({ knex: appKnex, storage, config }, { companyId: team.company.id, comparisonId }),
      );
    return { team, comparisonId, run };
  }

  const changesOf = async (knex: Knex, comparisonId: string) =>
    Number(
      ((await knex('comparisonChanges').where({ comparisonId }).count({ n: '*' }).first()) as { n: string })
        .n,
    );

  it('writes every change (several batches) and deleting the comparison deletes them', async () => {
    const { knex } = testEnv();
    const { comparisonId, run } = await requested(3000);
    expect(await run()).to.deep.equal({ status: 'ready', comparisonId });
    const row = (await knex('comparisons').where({ id: comparisonId }).first()) as {
      result: { changed: number };
    };
    expect(row.result.changed).to.equal(3000);
    expect(await changesOf(knex, comparisonId)).to.equal(3000);
    await knex('comparisons').where({ id: comparisonId }).delete();
    expect(await changesOf(knex, comparisonId)).to.equal(0);
  });

  it('a comparison deleted while its changes wait to be written: file_deleted, no change left', async () => {
    const { knex } = testEnv();
    const { comparisonId, run } = await requested(3000);
    // another transaction locks the comparison's row as soon as the run has started: the run's first batch
    // of changes waits for it; that transaction deletes the row and commits
    const trx = await knex.transaction();
    let outcome: Awaited<ReturnType<typeof run>> | undefined;
    try {
      const running = run().then((o) => (outcome = o));
      await eventually(
        async () => {
          const r = (await trx('comparisons').where({ id: comparisonId }).first()) as { status: string };
          return r.status === 'comparing' || undefined;
        },
        { what: 'the comparison started', timeoutMs: 30_000, intervalMs: 5 },
      );
      await trx('comparisons').where({ id: comparisonId }).forUpdate().first();
      await trx('comparisons').where({ id: comparisonId }).delete();
      await trx.commit();
      await running;
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
    expect(outcome).to.deep.equal({ status: 'file_deleted', comparisonId: null });
    expect(await changesOf(knex, comparisonId)).to.equal(0);
  });
});

describe('comparison: a version the strict reader refuses is loaded again from its download', function () {
  this.timeout(120_000);

  it('reads each object from MinIO once, the refused version included, and compares right', async () => {
    const { knex, appKnex, storage, config } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    const companyId = team.company.id;
    // rows and objects only (no workflow runs for them); both reports built here, so the comparison takes
    // their types and loads both versions unchecked
    const { fileId, datasetId } = await insertCompanyFile(team, 1, 2);
    const rest = '3,cy\n4,dee\n5,eve\n';
    // version 2: a line break inside quotes, plain bytes that DuckDB's strict parallel reader refuses
    const texts = [`id,name\n1,ann\n2,bob\n${rest}`, `id,name\n1,ann\n2,"bo\nb"\n${rest}`];
    const versionIds: string[] = [];
    for (const [i, text] of texts.entries()) {
      const id = randomUUID();
      const objectKey = storage.key('files', companyId, fileId, id);
      await storage.client.putObject(storage.bucket, objectKey, Buffer.from(text));
      await knex('fileVersions').insert({
        id,
        companyId,
        fileId,
        datasetId,
        version: i + 1,
        originalName: 'f1.csv',
        format: 'csv',
        contentType: 'text/csv',
        delimiter: ',',
        sizeBytes: Buffer.byteLength(text),
        objectKey,
        uploadedByPersonId: team.admin.id,
      });
      await knex('reports').insert({
        id: randomUUID(),
        companyId,
        fileId,
        fileVersionId: id,
        version: i + 1,
        status: 'queued',
        build: 1,
      });
      await actingStatement({ companyId }, () =>
        runBuild(
          { knex: appKnex, storage, config },
          { companyId, fileId, fileVersionId: id, version: i + 1, build: 1 },
        ),
      );
      versionIds.push(id);
    }
    const comparisonId = randomUUID();
    await knex('comparisons').insert({
      id: comparisonId,
      companyId,
      fileId,
      baseVersionId: versionIds[0],
      targetVersionId: versionIds[1],
      baseVersion: 1,
      targetVersion: 2,
      automatic: false,
      status: 'queued',
    });
    // every object read through a counting client
    const reads = new Map<string, number>();
    const counting = Object.create(storage.client) as typeof storage.client;
    counting.getObject = ((bucket: string, key: string) => {
      reads.set(key, (reads.get(key) ?? 0) + 1);
      return storage.client.getObject(bucket, key);
    }) as typeof storage.client.getObject;
    const outcome = await actingStatement({ companyId }, () =>
      runComparison(
        { knex: appKnex, storage: { ...storage, client: counting }, config },
        { companyId, comparisonId },
      ),
    );
    expect(outcome).to.deep.equal({ status: 'ready', comparisonId });
    const row = (await knex('comparisons').where({ id: comparisonId }).first()) as {
      result: { changed: number; unchanged: number; added: number; removed: number };
    };
    expect(row.result).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 4 });
    expect([...reads.values()]).to.deep.equal([1, 1]);
  });
});
