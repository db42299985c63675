/**
 * The webhooks domain's consumer of the outbox (db/outbox.ts): events become deliveries. Inside the claiming
 * transaction: one delivery record per active endpoint of the event's company subscribed to its type (a
 * `ping` goes to the pinged endpoint only); the unique (event, endpoint) index makes a second run of the
 * same batch create nothing. After commit: start the first attempts, one batch workflow per company (see
 * `webhookBatchWorkflow`).
 */
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { OutboxEvent } from '../../db/models';
import type { AfterCommit, FanOut } from '../../db/outbox';
import { startDeliveryBatches, type DeliveryToStart } from './starts';
import { createDeliveryStore } from './store';

export function createWebhookFanOut(deps: {
  config: Config;
  knex: Knex;
  logger: Logger;
  temporal: Client;
  /** the client shares the worker's NativeConnection: workflows may start eagerly on this worker */
  eagerStart?: boolean;
}) {
  const { config, knex, logger, temporal } = deps;
  const eager = deps.eagerStart ?? false;
  const store = createDeliveryStore({ knex, logger });

  async function start(deliveries: DeliveryToStart[]): Promise<void> {
    if (deliveries.length === 0) return;
    const { errors } = await startDeliveryBatches(temporal, knex, config, deliveries, { eager });
    // the deliveries stay unmarked; startLeftBehind retries them on a later dispatcher iteration
    if (errors.length > 0)
      logger.error({ err: errors[0], count: errors.length }, 'delivery workflow start failed');
  }

  const fanOut: FanOut = async (trx, events: OutboxEvent[]): Promise<AfterCommit[]> => {
    if (events.length === 0) return [];
    const payload = JSON.stringify(
      events.map((e) => ({
        id: e.id,
        company_id: e.companyId,
        type: e.type,
        data: e.data,
        created_at: new Date(e.createdAt).toISOString(),
      })),
    );
    const result = await trx.raw<{ rows: Array<{ id: string; companyId: string; eventId: string }> }>(
      `insert into webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, event_data, event_created_at)
       select gen_random_uuid(), ev.company_id, e.id, ev.id, ev.type, ev.data, ev.created_at
         from jsonb_to_recordset(?::jsonb) as ev(id uuid, company_id uuid, type text, data jsonb, created_at timestamptz)
         join webhook_endpoints e on e.company_id = ev.company_id and e.active
          and case when ev.type = 'ping' then e.id::text = ev.data->>'endpointId'
                   else ev.type = any(e.events) end
       on conflict (event_id, endpoint_id) where redelivery_of is null do nothing
       returning id, company_id as "companyId", event_id as "eventId"`,
      [payload],
    );
    const correlation = new Map(events.map((e) => [e.id, e.correlationId]));
    const created = result.rows.map((r) => ({
      id: r.id,
      companyId: r.companyId,
      correlationId: correlation.get(r.eventId) ?? null,
    }));
    return created.length > 0 ? [() => start(created)] : [];
  };

  /** Starts workflows for deliveries committed but never marked started (a crash between commit and start). */
  async function startLeftBehind(graceMs = 5_000): Promise<number> {
    const rows = await store.leftBehind(graceMs);
    if (rows.length === 0) return 0;
    logger.warn({ count: rows.length }, 'starting delivery workflows left behind');
    const { started, errors } = await startDeliveryBatches(temporal, knex, config, rows, { eager });
    if (errors.length > 0)
      logger.error({ err: errors[0], count: errors.length }, 'delivery workflow start failed');
    return started;
  }

  return { fanOut, startLeftBehind };
}
