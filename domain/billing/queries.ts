/** Reads of billing for a company's admins: the running bill, invoices, the invoice document's link. */
import type { Knex } from 'knex';
import type { Config } from '../../common/config';
import type { Storage } from '../../common/storage';
import { Invoice, PlanChange } from '../../db/models';
import { downloadLink } from '../files/downloads';
import { filesUsed } from '../plans/quota';
import { periodKey, type PlanName } from '../plans/plans';
import { invoiceOf, invoicesOf, type BillingActor } from './access';
import { computeBill, type Bill } from './compute';
import { documentInput } from './finalize';
import { storeInvoiceDocument } from './document';
import { presentInvoice } from './present';

/**
 * The running bill: the current period's bill as of `now`, computed exactly as the invoice would be if the
 * period ended now (the same `computeBill` over the same plan history and file usage).
 */
export async function currentBill(
  db: Knex | Knex.Transaction,
  actor: BillingActor,
  now: Date = new Date(),
  /** the period whose bill it is: the one `now` falls in (a test asks for the closed one at its very end) */
  key: string = periodKey(now),
): Promise<Bill> {
  const [history, used] = await Promise.all([
    PlanChange.scoped(actor.companyId, db)
      .select('plan', 'effectiveAt')
      .where('effectiveAt', '<=', now)
      .orderBy([{ column: 'effectiveAt' }, { column: 'id' }]),
    filesUsed(db, actor.companyId, key),
  ]);
  return computeBill({
    periodKey: key,
    history: history.map((h) => ({ plan: h.plan as PlanName | null, effectiveAt: h.effectiveAt })),
    filesUsed: used,
    asOf: now,
  });
}

/** The company's invoices, newest period first, a page at a time. */
export async function listInvoices(
  db: Knex | Knex.Transaction,
  actor: BillingActor,
  input: { page?: number; limit?: number },
) {
  const page = input.page ?? 1;
  const limit = input.limit ?? 20;
  const [total, rows] = await Promise.all([
    invoicesOf(actor, db).resultSize(),
    invoicesOf(actor, db)
      .orderBy([
        { column: 'periodStart', order: 'desc' },
        { column: 'sequence', order: 'desc' },
      ])
      .limit(limit)
      .offset((page - 1) * limit),
  ]);
  return {
    data: rows.map(presentInvoice),
    meta: { page, limit, total, totalPages: Math.ceil(total / limit) },
  };
}

/**
 * The company's invoices in the page-number list's order (newest period first; within a period — a void
 * invoice and its replacement — the higher number first), by keyset (period start, sequence). A cursor names
 * its invoice by period start and id (`cursorAt`, the row's id); the sequence is read back from that invoice.
 */
export async function invoicesPage(
  db: Knex | Knex.Transaction,
  actor: BillingActor,
  page: { limit: number; after?: { t: string; i: string } },
): Promise<Array<Invoice & { cursorAt: string }>> {
  const q = invoicesOf(actor, db).select('invoices.*');
  if (page.after)
    void q.whereRaw(
      `(invoices.period_start, invoices.sequence)
         < (?::timestamptz, (select cur.sequence from invoices cur where cur.id = ?))`,
      [page.after.t, page.after.i],
    );
  const rows = await q
    .orderBy([
      { column: 'periodStart', order: 'desc' },
      { column: 'sequence', order: 'desc' },
    ])
    .limit(page.limit + 1);
  return rows.map((row) =>
    Object.assign(row, { cursorAt: new Date(row.periodStart as unknown as string).toISOString() }),
  );
}

export async function getInvoice(db: Knex | Knex.Transaction, actor: BillingActor, id: string) {
  return presentInvoice(await invoiceOf(actor, db, id));
}

/**
 * A short-lived signed link to the invoice's PDF (like a file version's download link). A document that the
 * finalisation has not stored yet (its run stopped between the invoice's commit and the upload) is rendered
 * and stored now, from the invoice row alone.
 */
export async function invoiceDocumentLink(
  deps: { knex: Knex; config: Config; storage: Storage },
  actor: BillingActor,
  id: string,
  expiresIn: number = deps.config.files.downloadLinkTtlSeconds,
): Promise<{ url: string; expiresAt: string; expiresIn: number }> {
  const invoice = await invoiceOf(actor, deps.knex, id);
  let key = invoice.documentKey;
  if (!key) {
    key = await storeInvoiceDocument(deps.storage, documentInput(invoice as never));
    await Invoice.scoped(actor.companyId, deps.knex).findById(id).patch({ documentKey: key });
  }
  const link = await downloadLink(deps.config, key, `invoice-${invoice.number}.pdf`, expiresIn);
  return { ...link, expiresIn };
}
