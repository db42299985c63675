/**
 * Operators: suspend or reactivate a company, with a reason (README "Billing"); audited in the company's
 * audit log (company.suspended / company.reactivated, the reason and the operator in its details).
 *   npm run company:suspend -- <companyId> --reason "unpaid invoice 2026-000003"
 *   npm run company:reactivate -- <companyId> --reason "paid"
 * Prints {companyId, from, to, changed} as JSON; doing it twice changes nothing the second time.
 */
import { parseArgs } from 'node:util';
import os from 'node:os';
import { loadConfig } from '../common/config';
import { createKnex, migrateLatest } from '../db/knex';
import { setCompanyStatus } from '../domain/billing/companyStatus';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      suspend: { type: 'boolean', default: false },
      reactivate: { type: 'boolean', default: false },
      reason: { type: 'string' },
      operator: { type: 'string' },
    },
  });
  const companyId = positionals[0];
  const problems: string[] = [];
  if (values.suspend === values.reactivate) problems.push('exactly one of --suspend or --reactivate');
  if (!companyId || !/^[0-9a-f-]{36}$/i.test(companyId)) problems.push('the company id (a UUID) is required');
  if (!values.reason?.trim()) problems.push('--reason is required');
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(2);
  }
  const config = loadConfig();
  const knex = createKnex(config.databaseUrl, 2);
  try {
    await migrateLatest(knex);
    const result = await knex.transaction((trx) =>
      setCompanyStatus(trx, {
        companyId,
        status: values.suspend ? 'suspended' : 'active',
        reason: values.reason!.trim(),
        operator: values.operator ?? process.env.USER ?? os.userInfo().username,
      }),
    );
    // reactivated: wake the outbox dispatcher for the events held meanwhile
    if (result.changed && result.to === 'active') await knex.raw(`select pg_notify('outbox', '')`);
    console.log(JSON.stringify(result));
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
