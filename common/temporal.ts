import { Client, Connection } from '@temporalio/client';
import type { Config } from './config';

/**
 * A client whose connection is made on first use, so the API starts (and /ready can say "temporal down")
 * even while Temporal is not reachable yet.
 */
export function createTemporalClient(config: Config): Client {
  const connection = Connection.lazy({ address: config.temporal.address });
  return new Client({ connection, namespace: config.temporal.namespace });
}

/** Answers when the Temporal frontend serves this namespace. */
export async function checkTemporal(client: Client, timeoutMs = 2000): Promise<void> {
  await client.connection.withDeadline(Date.now() + timeoutMs, () =>
    client.connection.workflowService.describeNamespace({ namespace: client.options.namespace }),
  );
}
