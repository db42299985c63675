/**
 * Tenant isolation enforced by PostgreSQL (db/rls.ts, db/unitOfWork.ts). Table-driven from the schema:
 * every table with a company_id column (read from information_schema now, so a table added without a
 * policy — or without a row below to prove it — fails here), plus companies (isolated on its id).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { Model } from 'objection';
import { createKnex } from '../../db/knex';
import { systemRoleName } from '../../db/rls';
import { actingAs, asSystem, currentActing, unitOfWork, withCompany } from '../../db/unitOfWork';
import { testEnv } from '../helpers/env';

/** One row of every tenant table for `companyId`, written through the owner's connection. */
async function seedCompany(knex: Knex, companyId: string): Promise<void> {
  const id = () => randomUUID();
  const personId = id();
  const fileId = id();
  const datasetId = id();
  const versionId = id();
  const endpointId = id();
  const sessionId = id();
  const later = new Date(Date.now() + 3600_000);
  await knex('companies').insert({ id: companyId, name: `RLS ${companyId.slice(0, 8)}`, plan: 'free' });
  await knex('people').insert({
    id: personId,
    companyId,
    email: `rls-${id()}@example.test`,
    role: 'admin',
    status: 'active',
  });
  await knex('sessions').insert({ id: sessionId, companyId, personId });
  await knex('apiKeys').insert({
    id: id(),
    companyId,
    personId,
    name: 'k',
    scopes: ['files:read'],
    identifier: id(),
    secretFingerprint: 'x',
  });
  await knex('oneTimeTokens').insert({
    id: id(),
    companyId,
    personId,
    purpose: 'activation',
    tokenFingerprint: id(),
    expiresAt: later,
  });
  // dispatched already: no dispatcher of this run picks these up
  await knex('outbox').insert({ id: id(), companyId, type: 'ping', data: {}, dispatchedAt: new Date() });
  await knex('auditLog').insert({ id: id(), companyId, action: 'rls.test', resourceType: 'test' });
  await knex('fileUsage').insert({ companyId, periodKey: '2000-01', filesUsed: 1 });
  await knex('demoSeedSteps').insert({ companyId, name: 'rls-test' });
  await knex('idempotencyKeys').insert({
    scope: `company:${companyId}`,
    key: id(),
    companyId,
    fingerprint: 'x',
    state: 'done',
    expiresAt: later,
  });
  await knex('files').insert({
    id: fileId,
    companyId,
    datasetId,
    originalName: 'a.csv',
    uploadedByPersonId: personId,
  });
  await knex('datasets').insert({ id: datasetId, companyId, fileId });
  await knex('fileVersions').insert({
    id: versionId,
    companyId,
    fileId,
    datasetId,
    version: 1,
    originalName: 'a.csv',
    format: 'csv',
    contentType: 'text/csv',
    sizeBytes: 1,
    objectKey: `rls/${versionId}`,
    uploadedByPersonId: personId,
  });
  await knex('reports').insert({ id: id(), companyId, fileId, fileVersionId: versionId, version: 1 });
  await knex('quotaNotices').insert({
    companyId,
    periodKey: '2000-01',
    threshold: 80,
    plan: 'free',
    filesUsed: 1,
    filesLimit: 1,
  });
  // inactive: no fan-out of this run delivers to it
  await knex('webhookEndpoints').insert({
    id: endpointId,
    companyId,
    name: 'e',
    url: 'https://example.test/hook',
    events: ['ping'],
    active: false,
    secretEncrypted: 'x',
  });
  await knex('webhookDeliveries').insert({
    id: id(),
    companyId,
    endpointId,
    eventId: id(),
    eventType: 'ping',
    eventData: {},
    eventCreatedAt: new Date(),
    status: 'succeeded',
    workflowStartedAt: new Date(),
  });
  // issue 13: quality rules and sensitive-data findings
  await knex('rules').insert({ id: id(), companyId, name: 'r', kind: 'not_null', columnName: 'a' });
  await knex('sensitiveFindings').insert({
    id: id(),
    companyId,
    fileId,
    fileVersionId: versionId,
    version: 1,
    columns: JSON.stringify([]),
  });
  // issue 14: comparisons and their changes
  const comparisonId = id();
  await knex('comparisons').insert({
    id: comparisonId,
    companyId,
    fileId,
    baseVersionId: versionId,
    targetVersionId: versionId,
    baseVersion: 1,
    targetVersion: 1,
    status: 'ready',
  });
  await knex('comparisonChanges').insert({ comparisonId, companyId, seq: 1, sheet: 's', kind: 'added' });
  // issue 16: plan history (the companies insert above wrote one by trigger) and invoices
  await knex('invoices').insert({
    id: id(),
    companyId,
    sequence: 1,
    number: '2000-000001',
    periodKey: '2000-01',
    periodStart: new Date('2000-01-01T00:00:00Z'),
    periodEnd: new Date('2000-02-01T00:00:00Z'),
    currency: 'USD',
    subtotalCents: 0,
    totalCents: 0,
    lines: JSON.stringify([]),
    segments: JSON.stringify([]),
    filesUsed: 0,
    companyName: 'RLS',
  });
  // issue 18: analytics rollups (the triggers of the inserts above already wrote analytics_daily rows)
  await knex('analyticsDaily').insert({ companyId, day: '2000-01-01', metric: 'rls_test', value: 1 });
  await knex('analyticsRequests').insert({
    companyId,
    day: '2000-01-01',
    personId,
    apiKeyId: personId,
    requests: 1,
  });
  await knex('analyticsSensitiveFiles').insert({ companyId, day: '2000-01-01', fileId });
  // issue 15: comments and notifications
  await knex('comments').insert({ id: id(), companyId, fileId, authorPersonId: personId, body: 'c' });
  await knex('notifications').insert({
    id: id(),
    companyId,
    personId,
    kind: 'comment.on_your_file',
    resourceType: 'file',
    resourceId: fileId,
    dedupeKey: id(),
  });
}

interface TenantTable {
  table: string;
  column: string;
}

/** Every table of the schema that holds a company's rows, read from the catalog. */
async function tenantTables(knex: Knex): Promise<TenantTable[]> {
  const rows = (await knex.raw(
    `select table_name from information_schema.columns
     where table_schema = 'public' and column_name = 'company_id' order by table_name`,
  )) as { rows: Array<{ table_name: string }> };
  return [
    { table: 'companies', column: 'id' },
    ...rows.rows.map((r) => ({ table: r.table_name, column: 'company_id' })),
  ];
}

/** The companies of the rows `trx` sees in `table`, by a deliberately unscoped `select *`. */
async function companiesSeen(
  trx: Knex.Transaction | Knex,
  { table, column }: TenantTable,
): Promise<Set<string>> {
  const rows = (await trx.raw(`select * from ??`, [table])) as { rows: Array<Record<string, string>> };
  return new Set(rows.rows.map((r) => r[column]));
}

describe('row-level security (tenant isolation in the database)', () => {
  const a = randomUUID();
  const b = randomUUID();
  let tables: TenantTable[];

  before(async () => {
    const { knex } = testEnv();
    await seedCompany(knex, a);
    await seedCompany(knex, b);
    tables = await tenantTables(knex);
  });

  it('finds the tenant tables in the schema (and the test has a row of each company in each)', async () => {
    const { knex } = testEnv();
    expect(tables.map((t) => t.table)).to.include.members([
      'companies',
      'people',
      'files',
      'webhook_deliveries',
    ]);
    for (const t of tables) {
      const seen = await companiesSeen(knex, t);
      expect(
        seen.has(a) && seen.has(b),
        `seed a row of both companies into ${t.table} (seedCompany)`,
      ).to.equal(true);
    }
  });

  it('every tenant table has row-level security and both policies', async () => {
    const { knex, config } = testEnv();
    const appRole = config.databaseAppRole;
    for (const { table } of tables) {
      const cls = (await knex.raw(`select relrowsecurity from pg_class where oid = ?::regclass`, [
        table,
      ])) as {
        rows: Array<{ relrowsecurity: boolean }>;
      };
      expect(cls.rows[0]?.relrowsecurity, `row-level security on ${table}`).to.equal(true);
      const policies = (await knex.raw(
        `select policyname, roles::text[] as roles, qual from pg_policies where tablename = ? order by policyname`,
        [table],
      )) as { rows: Array<{ policyname: string; roles: string[]; qual: string }> };
      const column = table === 'companies' ? 'id' : 'company_id';
      expect(policies.rows, `policies of ${table}`).to.deep.equal([
        {
          policyname: 'system_task',
          roles: [systemRoleName(appRole)],
          qual: '(app_system_task() IS NOT NULL)',
        },
        // one comparison, no OR: an index on company_id serves it
        { policyname: 'tenant_isolation', roles: [appRole], qual: `(${column} = app_company_id())` },
      ]);
    }
  });

  it('inside a unit of work of company A an unscoped select * returns no row of B, in every table', async () => {
    const { appKnex } = testEnv();
    for (const t of tables) {
      const seen = await withCompany(appKnex, a, (trx) => companiesSeen(trx, t));
      expect(seen.has(a), `${t.table}: A sees its own row`).to.equal(true);
      expect([...seen], `${t.table}: only A`).to.deep.equal([a]);
    }
  });

  it('with no company set, nothing is returned from any tenant table', async () => {
    const { appKnex } = testEnv();
    for (const t of tables) {
      const inUnit = await unitOfWork(appKnex, (trx) => companiesSeen(trx, t));
      expect(inUnit.size, `${t.table} in a unit of work without an actor`).to.equal(0);
      const bare = await companiesSeen(appKnex, t);
      expect(bare.size, `${t.table} outside any unit of work`).to.equal(0);
    }
  });

  it("statements outside an explicit unit of work act for the scope's company (a request's principal)", async () => {
    const { appKnex } = testEnv();
    await actingAs({ companyId: b }, async () => {
      expect(currentActing()).to.deep.equal({ companyId: b });
      for (const t of tables) expect([...(await companiesSeen(appKnex, t))], t.table).to.deep.equal([b]);
    });
    // and the pooled connections do not keep it: outside the scope nothing is visible again
    expect((await companiesSeen(appKnex, { table: 'people', column: 'company_id' })).size).to.equal(0);
  });

  it("refuses writes into another company's rows (WITH CHECK) and updates of rows it cannot see", async () => {
    const { appKnex, knex } = testEnv();
    let refused: unknown;
    try {
      await withCompany(appKnex, a, (trx) =>
        trx('auditLog').insert({ id: randomUUID(), companyId: b, action: 'x', resourceType: 'x' }),
      );
    } catch (err) {
      refused = err;
    }
    expect(String(refused)).to.match(/row-level security/);
    const changed = await withCompany(appKnex, a, (trx) =>
      trx('companies').where({ id: b }).update({ name: 'taken over' }),
    );
    expect(changed).to.equal(0);
    const row = (await knex('companies').where({ id: b }).first()) as { name: string };
    expect(row.name).to.not.equal('taken over');
  });

  it('a unit of work on a connection that already acts for its actor sends no settings (one pooled connection)', async () => {
    const { config } = testEnv();
    const shared = Model.knex();
    const one = createKnex(config.databaseUrl, 1, { actAs: config.databaseAppRole });
    Model.knex(shared); // createKnex binds the models to the new knex: give them back
    // the statements of units of work (the settings made when a connection leaves the pool are not seen)
    const settings: string[] = [];
    one.on('query', (q: { sql: string }) => {
      if (q.sql.includes('set_config')) settings.push(q.sql);
    });
    const people = { table: 'people', column: 'company_id' };
    try {
      await actingAs({ companyId: a }, async () => {
        // the first statement sets the connection to company a when it leaves the pool (db/knex.ts)
        expect([...(await companiesSeen(one, people))]).to.deep.equal([a]);
        // the request's own unit of work: nothing to set, the connection acts for a already
        expect([...(await unitOfWork(one, (trx) => companiesSeen(trx, people)))]).to.deep.equal([a]);
        expect([...(await withCompany(one, a, (trx) => companiesSeen(trx, people)))]).to.deep.equal([a]);
        expect(settings, 'set_config in a unit of work acting as its connection').to.deep.equal([]);
        // another actor is set for its transaction only, and a nested unit of work sets its own
        const system = await asSystem(one, 'outbox-dispatch', async (trx) => ({
          outer: await companiesSeen(trx, people),
          nested: await withCompany(trx, a, (inner) => companiesSeen(inner, people)),
          nestedB: await withCompany(trx, b, (inner) => companiesSeen(inner, people)),
        }));
        expect(system.outer.has(a) && system.outer.has(b)).to.equal(true);
        expect([...system.nested]).to.deep.equal([a]);
        expect([...system.nestedB]).to.deep.equal([b]);
        expect([...(await withCompany(one, a, (trx) => companiesSeen(trx, people)))]).to.deep.equal([a]);
        expect([...(await withCompany(one, b, (trx) => companiesSeen(trx, people)))]).to.deep.equal([b]);
        expect([...(await companiesSeen(one, people))]).to.deep.equal([a]);
      });
    } finally {
      await one.destroy();
    }
  });

  it('a named system task sees every company; an unnamed one is refused', async () => {
    const { appKnex } = testEnv();
    for (const t of tables) {
      const seen = await asSystem(appKnex, 'outbox-dispatch', (trx) => companiesSeen(trx, t));
      expect(seen.has(a) && seen.has(b), `${t.table} as a system task`).to.equal(true);
    }
    expect(() => asSystem(appKnex, 'anything' as never, async () => 1)).to.throw(/unknown system task/);
    expect(() => actingAs({ system: 'anything' } as never, () => 1)).to.throw(/named system task/);
  });

  it("the application role (and the system tasks' role) has no BYPASSRLS, is no superuser and owns no table", async () => {
    const { appKnex, config } = testEnv();
    const whoSql = `select current_user as name, r.rolsuper, r.rolbypassrls from pg_roles r where r.rolname = current_user`;
    type Who = { rows: Array<{ name: string; rolsuper: boolean; rolbypassrls: boolean }> };
    const role = (await appKnex.raw(whoSql)) as Who;
    expect(role.rows[0]).to.deep.equal({
      name: config.databaseAppRole,
      rolsuper: false,
      rolbypassrls: false,
    });
    const system = (await asSystem(appKnex, 'outbox-dispatch', (trx) => trx.raw(whoSql))) as Who;
    expect(system.rows[0]).to.deep.equal({
      name: systemRoleName(config.databaseAppRole),
      rolsuper: false,
      rolbypassrls: false,
    });
    // and a unit of work of a company is back to the application role
    const tenant = (await withCompany(appKnex, a, (trx) => trx.raw(whoSql))) as Who;
    expect(tenant.rows[0].name).to.equal(config.databaseAppRole);
    const owned = (await appKnex.raw(
      `select count(*)::int as n from pg_tables where schemaname = 'public' and tableowner in (?, ?)`,
      [config.databaseAppRole, systemRoleName(config.databaseAppRole)],
    )) as { rows: Array<{ n: number }> };
    expect(owned.rows[0].n).to.equal(0);
  });
});
