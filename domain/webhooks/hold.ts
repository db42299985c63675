/**
 * Deliveries of a suspended company are held (README "Billing"): its outbox events wait undispatched
 * (db/outbox.ts), and a delivery already handed to a workflow — a batch's first attempt, a delivery's retries —
 * is not attempted while the company is suspended. The workflow waits and checks again (policy.ts,
 * `holdDelayMs`) without using up its attempts, and goes on once the company is active again.
 */
import type { Knex } from 'knex';

/** Whether the company is suspended now. */
export async function companySuspended(knex: Knex, companyId: string): Promise<boolean> {
  const row = (await knex('companies').select('status').where('id', companyId).first()) as
    { status: string } | undefined;
  return row?.status === 'suspended';
}

/** Whether the company of the delivery is suspended now (false when the delivery no longer exists). */
export async function deliverySuspended(knex: Knex, deliveryId: string): Promise<boolean> {
  const row = (await knex('webhookDeliveries as d')
    .join('companies as c', 'c.id', 'd.companyId')
    .select('c.status')
    .where('d.id', deliveryId)
    .first()) as { status: string } | undefined;
  return row?.status === 'suspended';
}

/**
 * `companySuspended` for one company as a batch asks it before each first attempt: read again when the last
 * answer is older than `maxAgeMs`, one read at a time, so a batch of hundreds costs a few queries and a
 * suspension applies to it within `maxAgeMs`.
 */
export function suspensionCheck(knex: Knex, companyId: string, maxAgeMs = 1_000): () => Promise<boolean> {
  let last: { at: number; answer: Promise<boolean> } | undefined;
  return () => {
    const now = Date.now();
    if (!last || now - last.at > maxAgeMs) {
      const answer = companySuspended(knex, companyId);
      const current = { at: now, answer };
      // a failed read is not kept: the next delivery asks again
      answer.catch(() => {
        if (last === current) last = undefined;
      });
      last = current;
    }
    return last.answer;
  };
}
