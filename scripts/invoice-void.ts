/**
 * Operators: void an invoice, with a reason (README "Billing"). The invoice stays, with its number (numbers
 * have no gaps); its status becomes `void`. Audited in the company's audit log (`invoice.voided`).
 *   npm run billing:void -- <invoiceId> --reason "issued in error"
 * Prints {invoiceId, number, from, to, changed} as JSON; voiding twice changes nothing the second time.
 */
import { parseArgs } from 'node:util';
import os from 'node:os';
import { loadConfig } from '../common/config';
import { createKnex, migrateLatest } from '../db/knex';
import { recordAudit } from '../domain/audit/record';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { reason: { type: 'string' }, operator: { type: 'string' } },
  });
  const invoiceId = positionals[0];
  if (!invoiceId || !/^[0-9a-f-]{36}$/i.test(invoiceId) || !values.reason?.trim()) {
    console.error('usage: billing:void -- <invoiceId> --reason "…"');
    process.exit(2);
  }
  const config = loadConfig();
  const knex = createKnex(config.databaseUrl, 2);
  try {
    await migrateLatest(knex);
    const result = await knex.transaction(async (trx) => {
      const row = (await trx('invoices')
        .select('companyId', 'number', 'status')
        .where('id', invoiceId)
        .forUpdate()
        .first()) as { companyId: string; number: string; status: string } | undefined;
      if (!row) throw new Error(`no invoice ${invoiceId}`);
      const changed = row.status !== 'void';
      if (changed) {
        await trx('invoices').where('id', invoiceId).update({ status: 'void', updatedAt: trx.fn.now() });
        await recordAudit(trx, {
          companyId: row.companyId,
          personId: null,
          action: 'invoice.voided',
          resourceType: 'invoice',
          resourceId: invoiceId,
          details: {
            number: row.number,
            reason: values.reason!.trim(),
            operator: values.operator ?? process.env.USER ?? os.userInfo().username,
          },
        });
      }
      return { invoiceId, number: row.number, from: row.status, to: 'void', changed };
    });
    console.log(JSON.stringify(result));
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
