/**
 * A report build's failure that the activity retries goes out (Temporal's records, the worker's log) naming
 * only the kind of error, as a comparison's does: DuckDB's and PostgreSQL's errors may quote the file's cells.
 */
import { expect } from 'chai';
import type { AnalysisStep } from '../../domain/reports/engine';
import { startWorker, testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { call } from '../helpers/http';
import { uploadFile } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import { duckdbCsvError, retriedFailure, SECRET } from '../helpers/failures';
import { startWebhookApp, webhookTestConfig } from '../helpers/webhooks';

describe('report build failures: no text of the file in what a failed attempt lets out', function () {
  this.timeout(120_000);

  it('a step failing with a DuckDB error quoting a cell is recorded without it, then retried', async () => {
    // its own task queue: the step below is this worker's only
    const config = webhookTestConfig('report-failures');
    // the first build this worker runs fails once (only this test's upload reaches its task queue)
    let failed = false;
    const step: AnalysisStep = {
      name: 'failOnce',
      run: async () => {
        if (!failed) {
          failed = true;
          throw new Error(`the step could not start ${SECRET}`, { cause: await duckdbCsvError() });
        }
        return { passed: true };
      },
    };
    const worker = await startWorker({ config, reportSteps: [step] });
    try {
      const { baseUrl } = await startWebhookApp(config);
      const team = await createTeam({ plan: 'premium' });
      const up = await uploadFile('id,name\n1,ann\n', { token: team.adminToken, baseUrl });
      expect(up.status, up.text).to.equal(201);
      const id = up.body.id as string;
      const done = await eventually(
        async () => {
          const res = await call('GET', `/files/${id}/versions/1/report`, {
            token: team.adminToken,
            baseUrl,
          });
          return res.body?.status === 'ready' || res.body?.status === 'failed' ? res.body : undefined;
        },
        { what: 'the build retried', timeoutMs: 60_000 },
      );
      expect(done.status).to.equal('ready');
      // the retried attempt's started event is written when it completes, after its save: wait for the end
      const handle = testEnv().temporal.workflow.getHandle(`report:${id}:v1`);
      await handle.result();
      const events = (await handle.fetchHistory()).events ?? [];
      const failure = retriedFailure(events);
      expect(failure, 'a retried attempt with its last failure').to.be.a('string');
      expect(failure).to.include('the report build failed (Error)');
      expect(JSON.stringify(events)).not.to.include(SECRET);
    } finally {
      await worker.stop();
    }
  });
});
