/**
 * How a comparison fails. A failure the activity retries goes out (to Temporal's records and the worker's
 * log) naming only the kind of error: DuckDB's and PostgreSQL's errors may quote the file's cells.
 */
import { expect } from 'chai';
import { withoutFileContent } from '../../activities/failures';
import { startWorker, testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { call } from '../helpers/http';
import { uploadFile, uploadTo, xlsx } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import { duckdbCsvError, retriedFailure, SECRET } from '../helpers/failures';
import { startWebhookApp, webhookTestConfig } from '../helpers/webhooks';

/** everything of an error the SDK could record or print */
function everything(err: Error): string {
  return [err.message, err.stack, JSON.stringify(err), String(err.cause)].join('\n');
}

describe('comparison failures: no text of the files in what a failed attempt lets out', function () {
  this.timeout(120_000);

  it('DuckDB and PostgreSQL errors quoting cells go out as their kind only', async () => {
    const duck = await duckdbCsvError();
    expect(duck.message, 'DuckDB quotes the line (the premise)').to.include(SECRET);
    const outDuck = withoutFileContent(duck, 'the comparison');
    expect(outDuck.message).to.equal('the comparison failed (Error, Invalid Input Error)');
    expect(everything(outDuck)).not.to.include(SECRET);
    expect(outDuck.cause).to.equal(undefined);
    expect(outDuck.stack).to.match(/\n\s+at /); // the frames stay

    // PostgreSQL refuses a \u0000 in JSON text and prints the text around it (`where`)
    const pg: Error = await testEnv()
      .knex.raw(`select ?::jsonb`, [`{"name": "${SECRET}\\u0000"}`])
      .then(
        () => new Error('PostgreSQL took it'),
        (err: Error) => err,
      );
    expect(JSON.stringify(pg), 'PostgreSQL quotes the value (the premise)').to.include(SECRET);
    const outPg = withoutFileContent(pg, 'the comparison');
    expect(outPg.message).to.equal('the comparison failed (error, 22P05)');
    expect(everything(outPg)).not.to.include(SECRET);

    // a wrapped error: its cause does not go out either
    const wrapped = new Error('could not compare', { cause: duck });
    expect(everything(withoutFileContent(wrapped, 'the comparison'))).not.to.include(SECRET);
    // a system error keeps its call and code
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    });
    expect(withoutFileContent(refused, 'the comparison').message).to.equal(
      'the comparison failed (Error, connect, ECONNREFUSED)',
    );
  });

  it('through Temporal: the attempt that failed with a DuckDB error is recorded without its text, then retried', async () => {
    // its own task queue: the hook below is this worker's only
    const config = webhookTestConfig('compare-failures');
    const failOnce = new Set<string>();
    const worker = await startWorker({
      config,
      comparisonBeforeSave: async ({ fileId }) => {
        if (failOnce.delete(fileId))
          throw new Error('the save could not start', { cause: await duckdbCsvError() });
      },
    });
    try {
      const { baseUrl } = await startWebhookApp(config);
      const team = await createTeam({ plan: 'premium' });
      const up = await uploadFile('id,name\n1,ann\n2,bob\n', { token: team.adminToken, baseUrl });
      expect(up.status, up.text).to.equal(201);
      const id = up.body.id as string;
      failOnce.add(id);
      const v2 = await uploadTo(`/files/${id}/versions`, 'id,name\n1,ann\n2,bobby\n', {
        token: team.adminToken,
        baseUrl,
      });
      expect(v2.status, v2.text).to.equal(201);
      const handle = testEnv().temporal.workflow.getHandle(`comparison:${id}:v1:v2`);
      const done = await eventually(
        async () => {
          const res = await call('GET', `/files/${id}/versions/2/comparison`, {
            token: team.adminToken,
            baseUrl,
          });
          return res.body?.status === 'ready' || res.body?.status === 'failed' ? res.body : undefined;
        },
        { what: 'the comparison retried', timeoutMs: 60_000 },
      );
      expect(done.status).to.equal('ready');
      expect(done.result).to.deep.include({ changed: 1, unchanged: 1 });
      // the first attempt's failure, as Temporal keeps it: the started event of a retried activity carries
      // the last failure (read from the history, so no poll has to catch the short wait before the retry).
      // That event is written when the attempt completes, after its save: the workflow's end comes after it
      await handle.result();
      const events = (await handle.fetchHistory()).events ?? [];
      const failure = retriedFailure(events);
      expect(failure, 'a retried attempt with its last failure').to.be.a('string');
      expect(failure).to.include('the comparison failed (Error)');
      expect(failure).not.to.include(SECRET);
      expect(failure).not.to.include('could not start');
      expect(JSON.stringify(events)).not.to.include(SECRET);
    } finally {
      await worker.stop();
    }
  });

  it('a version that cannot be read fails the comparison naming that version (base and target)', async () => {
    const config = webhookTestConfig('compare-unreadable');
    const worker = await startWorker({ config });
    try {
      const { baseUrl } = await startWebhookApp(config);
      const team = await createTeam({ plan: 'premium' });
      const good = 'id,name\n1,ann\n2,bob\n';
      // a quoted field never closed: the file ends inside it
      const bad = 'id,name\n1,ann\n2,"bob\n';
      for (const [v1, v2, side] of [
        [bad, good, 'the base version (1)'],
        [good, bad, 'the target version (2)'],
      ]) {
        const up = await uploadFile(v1, { token: team.adminToken, name: 'data.csv', baseUrl });
        expect(up.status, up.text).to.equal(201);
        const id = up.body.id as string;
        const next = await uploadTo(`/files/${id}/versions`, v2, {
          token: team.adminToken,
          name: 'data.csv',
          baseUrl,
        });
        expect(next.status, next.text).to.equal(201);
        const done = await eventually(
          async () => {
            const res = await call('GET', `/files/${id}/versions/2/comparison`, {
              token: team.adminToken,
              baseUrl,
            });
            return res.body?.status === 'failed' || res.body?.status === 'ready' ? res.body : undefined;
          },
          { what: 'the automatic comparison', timeoutMs: 60_000 },
        );
        expect([done.status, done.failureReason], side).to.deep.equal(['failed', 'unparsable_file']);
        expect(done.failureMessage, side).to.match(new RegExp(`^${side.replace(/[()]/g, '\\$&')}: `));
      }
    } finally {
      await worker.stop();
    }
  });

  it('a version whose stored object is gone: the comparison fails at once with file_missing (CSV and XLSX)', async () => {
    const config = webhookTestConfig('compare-missing');
    const worker = await startWorker({ config });
    try {
      const { knex, storage, temporal } = testEnv();
      const { baseUrl } = await startWebhookApp(config);
      const team = await createTeam({ plan: 'premium' });
      const cases: Array<{ name: string; v1: string | Buffer; v2: string | Buffer; gone: 1 | 2 }> = [
        { name: 'data.csv', v1: 'id,name\n1,ann\n', v2: 'id,name\n1,bob\n', gone: 1 },
        { name: 'data.xlsx', v1: await xlsx(3), v2: await xlsx(4), gone: 2 },
      ];
      for (const c of cases) {
        const up = await uploadFile(c.v1, { token: team.adminToken, name: c.name, baseUrl });
        expect(up.status, up.text).to.equal(201);
        const id = up.body.id as string;
        const v2 = await uploadTo(`/files/${id}/versions`, c.v2, {
          token: team.adminToken,
          name: c.name,
          baseUrl,
        });
        expect(v2.status, v2.text).to.equal(201);
        const get = (path: string) => call('GET', path, { token: team.adminToken, baseUrl });
        await eventually(
          async () =>
            (await get(`/files/${id}/versions/2/comparison`)).body?.status === 'ready' ? true : undefined,
          { what: 'the automatic comparison', timeoutMs: 60_000 },
        );
        const version = (await knex('fileVersions').where({ fileId: id, version: c.gone }).first()) as {
          objectKey: string;
        };
        await storage.client.removeObject(storage.bucket, version.objectKey);
        const req = await call('POST', '/comparisons', {
          token: team.adminToken,
          baseUrl,
          json: { base: { fileId: id, version: 1 }, target: { fileId: id, version: 2 } },
        });
        expect(req.status, req.text).to.equal(202);
        const done = await eventually(
          async () => {
            const res = await get(`/comparisons/${req.body.id}`);
            return res.body?.status === 'failed' || res.body?.status === 'ready' ? res.body : undefined;
          },
          { what: `the comparison of ${c.name}`, timeoutMs: 30_000 },
        );
        expect([done.status, done.failureReason, done.failureMessage], c.name).to.deep.equal([
          'failed',
          'file_missing',
          `the ${c.gone === 1 ? 'base' : 'target'} version (${c.gone}): the stored file of the version is missing`,
        ]);
        // not retried: one attempt
        const history = await temporal.workflow
          .getHandle(`comparison:${id}:v1:v2:${req.body.id}`)
          .fetchHistory();
        const attempts = (history.events ?? [])
          .map((e) => e.activityTaskStartedEventAttributes?.attempt)
          .filter((a): a is number => typeof a === 'number');
        expect(
          attempts.filter((a) => a > 1),
          c.name,
        ).to.deep.equal([]);
      }
    } finally {
      await worker.stop();
    }
  });
});
