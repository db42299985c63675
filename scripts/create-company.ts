/**
 * Operators and first starts: creates an active company with an active admin who can sign in at once.
 *   npm run create-company -- --company "Acme" --email admin@acme.test --password '…' [--name "Ada"] [--plan free|basic|premium]
 * The password may also come from the environment (ADMIN_PASSWORD) so it stays out of shell history.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { hashPassword, PASSWORD_MIN_LENGTH } from '../domain/identity/passwords';
import { loadConfig } from '../common/config';
import { PLAN_NAMES, type PlanName } from '../domain/plans/plans';
import { recordAudit } from '../domain/audit/record';
import { createKnex, migrateLatest } from '../db/knex';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      company: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      name: { type: 'string' },
      plan: { type: 'string' },
    },
  });
  const password = values.password ?? process.env.ADMIN_PASSWORD;
  const problems: string[] = [];
  if (!values.company) problems.push('--company is required');
  if (!values.email || !/^[^@\s]+@[^@\s]+$/.test(values.email))
    problems.push('--email must be an e-mail address');
  if (!password || password.length < PASSWORD_MIN_LENGTH) {
    problems.push(`--password (or ADMIN_PASSWORD) must have at least ${PASSWORD_MIN_LENGTH} characters`);
  }
  if (values.plan && !PLAN_NAMES.includes(values.plan as PlanName)) {
    problems.push(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
  }
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(2);
  }
  const config = loadConfig();
  const knex = createKnex(config.databaseUrl, 2);
  try {
    await migrateLatest(knex);
    const companyId = randomUUID();
    const personId = randomUUID();
    const passwordHash = await hashPassword(password!);
    await knex.transaction(async (trx) => {
      await trx('companies').insert({
        id: companyId,
        name: values.company,
        status: 'active',
        plan: values.plan ?? null,
      });
      await trx('people').insert({
        id: personId,
        companyId,
        email: values.email,
        name: values.name ?? '',
        role: 'admin',
        status: 'active',
        passwordHash,
      });
      await recordAudit(trx, {
        companyId,
        personId: null,
        action: 'company.created_by_operator',
        resourceType: 'company',
        resourceId: companyId,
        details: { adminId: personId },
      });
    });
    console.log(
      JSON.stringify({ companyId, adminId: personId, email: values.email, plan: values.plan ?? null }),
    );
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  console.error(
    /people_email_unique/.test(message) ? 'an account with this address already exists' : message,
  );
  process.exit(1);
});
