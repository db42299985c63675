import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { OutboxActivities } from '../activities/outbox';

const { dispatchOutbox } = proxyActivities<OutboxActivities>({
  // dispatchOutbox dispatches and waits for new events for up to the idle wait, heartbeating
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * The outbox dispatcher: one long-running workflow per task queue. Each activity run claims batches of
 * unsent outbox rows (waiting for a NOTIFY when there are none), hands them on, and marks them
 * dispatched, for up to the idle wait. History is bounded by continuing as new.
 */
export async function outboxDispatcherWorkflow(): Promise<void> {
  for (;;) {
    await dispatchOutbox();
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > 3000) {
      await continueAsNew<typeof outboxDispatcherWorkflow>();
    }
  }
}
