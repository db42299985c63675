import { condition, patched, setHandler, sleep } from '@temporalio/workflow';
import { companyReactivatedSignal } from './definitions/webhooks';

/**
 * Marks the histories whose hold waits can be ended by `companyReactivatedSignal`. Workflows that began their
 * waits before it existed replay those waits as the plain timers they were (see `holdWaits`); once none of
 * them can be running any more (the 30-day hold limit), this can become `deprecatePatch`.
 */
export const WAKE_ON_REACTIVATION_PATCH = 'webhook-hold-wake-on-reactivation';

export interface HoldWaits {
  /** Call as a check of the company's status begins: a wake from now on ends the next `wait`. */
  checking(): void;
  /** Waits `ms` (`holdDelayMs`), or less: until a wake received since the last `checking()`. */
  wait(ms: number): Promise<void>;
}

/**
 * The waits of a held delivery (README "Billing"): a durable timer, ended early by `companyReactivatedSignal`.
 * A wake that arrives while the check activity runs counts too (the check may have read the status just before
 * the reactivation committed), so the next wait ends at once. A stray wake costs one more check, nothing else.
 *
 * Replay: `condition(fn, ms)` schedules the same timer command as `sleep(ms)`, so a history without the signal
 * replays unchanged (the timer fires, the condition answers false). A history in which an older build (without
 * the handler) received the signal would not: the wait would end at the signal and cancel a timer the history
 * shows firing. The patch keeps the waits of such histories on `sleep` up to where this build took over
 * (test/workflows/webhookHoldReplay.test.ts replays three of them).
 */
export function holdWaits(): HoldWaits {
  let wakes = 0;
  let seen = 0;
  setHandler(companyReactivatedSignal, () => {
    wakes++;
  });
  return {
    checking() {
      seen = wakes;
    },
    async wait(ms) {
      if (!patched(WAKE_ON_REACTIVATION_PATCH)) {
        await sleep(ms);
        return;
      }
      const since = seen;
      await condition(() => wakes > since, ms);
    },
  };
}
