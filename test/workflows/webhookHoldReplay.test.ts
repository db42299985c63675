/**
 * Replay compatibility of the hold waits (workflows/holdWait.ts): histories recorded by the build before
 * `companyReactivatedSignal` existed, each sent the signal while that build waited in a hold (it had no
 * handler), replay with today's workflow code (test/fixtures/webhook-histories/SOURCE.md). Today's handler
 * sees the signal on replay; without the patch it would end a wait whose timer the history shows firing.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { ROOT, workflowBundle } from '../helpers/env';

const DIR = path.join(ROOT, 'test', 'fixtures', 'webhook-histories');

describe('webhook hold waits replay histories from before the reactivation wake', () => {
  for (const name of ['batch', 'delivery', 'retrying']) {
    it(`replays a held ${name} workflow sent the signal by the earlier build`, async () => {
      const history = temporal.api.history.v1.History.fromObject(
        JSON.parse(readFileSync(path.join(DIR, `${name}-held-signalled.json`), 'utf8')),
      );
      const events = history.events ?? [];
      // what the fixture claims: the signal arrived during a hold, and a later timer still fired
      const signalAt = events.findIndex(
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'companyReactivated',
      );
      expect(signalAt).to.be.greaterThan(0);
      expect(events.slice(signalAt).some((e) => e.timerFiredEventAttributes)).to.equal(true);
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, name);
    });
  }
});
