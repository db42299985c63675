/**
 * The demo company: created on first use, with sample data, and shared read-only by every demo visitor.
 *
 * To show a new kind of data in the demo, append a step to DEMO_SEED_STEPS with a new name. Steps run once
 * per demo company, in order, each in the transaction that records it; a step added after the demo company
 * exists is applied at the next opening. Never rename a step (it would run again).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import iconv from 'iconv-lite';
import { AFTER_COMMIT_WAIT_MS, runAfterCommitHooks } from '../../db/transaction';
import { unitOfWork } from '../../db/unitOfWork';
import { ForbiddenError, NotFoundError } from '../../common/errors';
import { keysOf } from './keys';
import type { PlanName } from '../plans/plans';
import type { IdentityDeps, RunUnitOfWork } from './deps';
import { startSession, type TokenPair } from './sessions';
import { generateKey } from './keyFormat';
import type { Role, Scope } from './scopes';
import type { Client } from '@temporalio/client';
import { contentTypeOf } from '../files/formats';
import { uuidv7 } from '../../common/ids';
import type { Storage } from '../../common/storage';
import { REPORT_WORKFLOW, reportStart } from '../../workflows/definitions/reports';

export const DEMO_COMPANY_NAME = 'Demo Company';
export const DEMO_PLAN: PlanName = 'premium';
/** Visitors act as this person: an admin, so the admin screens can be seen too (read-only). */
export const DEMO_VISITOR_ROLE: Role = 'admin';

export interface DemoCompany {
  companyId: string;
  /** the person every demo session acts as */
  visitorId: string;
}

export interface DemoSeedContext extends DemoCompany {
  trx: Knex.Transaction;
  secretKey: string;
  /** MinIO and Temporal, for steps that store files and start their report builds (absent: such steps skip) */
  services?: DemoServices;
  /** runs once the seeding transaction has committed */
  afterCommit(fn: () => Promise<void>): void;
}

export interface DemoServices {
  storage: Storage;
  temporal: Client;
  taskQueue: string;
}

/** The demo's sample tables: deterministic, small, with the kinds of columns a profile shows. */
function demoSales(): string {
  const regions = ['North', 'South', 'East', 'West'];
  const products = ['Widget', 'Gadget', 'Gizmo', 'Doohickey', 'Sprocket'];
  const lines = ['order_id,order_date,region,product,quantity,unit_price,paid,note'];
  for (let i = 1; i <= 120; i++) {
    const day = new Date(Date.UTC(2026, 0, 1) + ((i * 37) % 300) * 86_400_000).toISOString().slice(0, 10);
    const quantity = (i * 7) % 23;
    const price = (((i * 131) % 9000) / 100 + 5).toFixed(2);
    const note = i % 9 === 0 ? '' : i % 11 === 0 ? '"gift, wrapped"' : `batch ${i % 6}`;
    lines.push(
      `${1000 + i},${day},${regions[i % 4]},${products[i % 5]},${quantity},${price},${i % 4 === 0 ? 'no' : 'yes'},${note}`,
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * A German spreadsheet program's "CSV": semicolons, Windows-1252 (Straße, München, €), decimal commas and
 * day-first dates — read as numbers and dates (README "Reports", notation; docs/files.md "Encoding").
 */
export function demoUmsatz(): string {
  const cities = ['München', 'Köln', 'Düsseldorf', 'Nürnberg'];
  // as Excel saves it for Excel (its separator line), under the report's title and an empty line
  const lines = ['sep=;', 'Umsatzbericht 2026 (Filialen)', '', 'Beleg;Datum;Stadt;Straße;Betrag;Währung'];
  for (let i = 1; i <= 80; i++) {
    const day = new Date(Date.UTC(2026, 2, 1) + ((i * 11) % 200) * 86_400_000);
    const date = `${String(day.getUTCDate()).padStart(2, '0')}.${String(day.getUTCMonth() + 1).padStart(2, '0')}.${day.getUTCFullYear()}`;
    const amount = (((i * 9973) % 500000) / 100 + 10).toFixed(2).replace('.', ',');
    const grouped = amount.replace(/^(\d+)(\d{3}),/, '$1.$2,'); // 1.234,56
    lines.push(`R-${2000 + i};${date};${cities[i % 4]};Hauptstraße ${i};${grouped};€`);
  }
  return lines.join('\r\n') + '\r\n';
}

/**
 * A spreadsheet program's CSV export in the United States of a sheet with a title row: the title and a blank row
 * padded with commas to the table's width, month-first dates, amounts in dollars (quoted: their commas),
 * discounts in percent and adjustments as accounting negatives — read as dates and numbers (README "Reports",
 * notation; docs/files.md "Lines before the header").
 */
export function demoOrdersUs(): string {
  const customers = ['Acme Corp', 'Globex', 'Initech', 'Umbrella', 'Hooli'];
  const lines = ['Q2 2026 Orders,,,,,', ',,,,,', 'Order,Date,Customer,Amount,Discount,Adjustment'];
  for (let i = 1; i <= 90; i++) {
    const day = new Date(Date.UTC(2026, 3, 1) + ((i * 7) % 91) * 86_400_000);
    const date = `${day.getUTCMonth() + 1}/${day.getUTCDate()}/${day.getUTCFullYear()}`;
    const cents = ((i * 104_729) % 900_000) + 1_000;
    const amount = `$${Math.floor(cents / 100).toLocaleString('en-US')}.${String(cents % 100).padStart(2, '0')}`;
    const discount = `${(i * 5) % 25}%`;
    const adjustment = i % 6 === 0 ? `($${((i % 40) + 0.5).toFixed(2)})` : '$0.00';
    lines.push(`SO-${3000 + i},${date},${customers[i % 5]},"${amount}",${discount},${adjustment}`);
  }
  return lines.join('\r\n') + '\r\n';
}

function demoInventory(): string {
  const lines = ['sku\twarehouse\tin_stock\treorder_level\tlast_counted'];
  for (let i = 1; i <= 60; i++) {
    const counted = new Date(Date.UTC(2026, 5, 1) + ((i * 13) % 90) * 86_400_000).toISOString().slice(0, 10);
    lines.push(
      `SKU-${String(i).padStart(4, '0')}\t${['Lyon', 'Lille', 'Nantes'][i % 3]}\t${(i * 29) % 400}\t${50 + (i % 5) * 10}\t${counted}`,
    );
  }
  return lines.join('\n') + '\n';
}

/** A file with one version stored in MinIO; its report is built by the worker after the seeding commits. */
async function addFile(
  ctx: DemoSeedContext,
  services: DemoServices,
  file: {
    name: string;
    format: 'csv' | 'tsv';
    delimiter: string;
    content: string;
    columns: number;
    encoding?: 'utf-8' | 'windows-1252';
    /** lines before the header (Excel's separator line, a title), as the upload's sniff would find them */
    linesBeforeHeader?: number;
    /** the row a spreadsheet shows the header on (the separator line is none), as the sniff would find it */
    headerRow?: number;
  },
): Promise<void> {
  const fileId = uuidv7();
  const datasetId = uuidv7();
  const versionId = uuidv7();
  const encoding = file.encoding ?? 'utf-8';
  const data = encoding === 'utf-8' ? Buffer.from(file.content) : iconv.encode(file.content, 'win1252');
  const objectKey = services.storage.key('files', ctx.companyId, fileId, versionId);
  // the object first: a seeding that rolls back leaves an unreferenced object for the orphan sweep
  await services.storage.client.putObject(services.storage.bucket, objectKey, data, data.length, {
    'Content-Type': contentTypeOf(file.format, encoding),
  });
  await ctx.trx('files').insert({
    id: fileId,
    companyId: ctx.companyId,
    datasetId,
    originalName: file.name,
    uploadedByPersonId: ctx.visitorId,
    visibility: 'company',
    currentVersion: 1,
  });
  await ctx.trx('datasets').insert({ id: datasetId, companyId: ctx.companyId, fileId });
  await ctx.trx('fileVersions').insert({
    id: versionId,
    companyId: ctx.companyId,
    fileId,
    datasetId,
    version: 1,
    originalName: file.name,
    format: file.format,
    contentType: contentTypeOf(file.format, encoding),
    delimiter: file.delimiter,
    encoding,
    linesBeforeHeader: file.linesBeforeHeader ?? 0,
    headerRow: file.headerRow ?? 1,
    sizeBytes: data.length,
    objectKey,
    rowCount: file.content.trimEnd().split('\n').length - 1 - (file.linesBeforeHeader ?? 0),
    columnCount: file.columns,
    uploadedByPersonId: ctx.visitorId,
  });
  ctx.afterCommit(async () => {
    // as after an upload; if Temporal is down, the hourly sweep starts it later (startMissingAnalyses)
    await services.temporal.workflow.start(
      REPORT_WORKFLOW,
      reportStart(
        { companyId: ctx.companyId, fileId, fileVersionId: versionId, version: 1 },
        { taskQueue: services.taskQueue },
      ),
    );
  });
}

export interface DemoSeedStep {
  name: string;
  run(ctx: DemoSeedContext): Promise<void>;
}

/**
 * Sample addresses end in the reserved .invalid domain (no mail, no Google account can verify them) and
 * carry a random part, so nobody can register one of them first and block the seeding.
 */
function sampleAddress(local: string): string {
  return `${local}-${randomBytes(4).toString('hex')}@demo.invalid`;
}

async function addPerson(
  ctx: DemoSeedContext,
  person: { name: string; local: string; role: Role; status?: string },
): Promise<string> {
  const id = randomUUID();
  // no password: demo people cannot sign in, only the demo opening begins sessions for the visitor
  await ctx.trx('people').insert({
    id,
    companyId: ctx.companyId,
    email: sampleAddress(person.local),
    name: person.name,
    role: person.role,
    status: person.status ?? 'active',
    passwordHash: null,
  });
  return id;
}

export const DEMO_SEED_STEPS: DemoSeedStep[] = [
  {
    name: 'people',
    async run(ctx) {
      await addPerson(ctx, { name: 'Grace Hopper', local: 'grace', role: 'admin' });
      await addPerson(ctx, { name: 'Ada Lovelace', local: 'ada', role: 'employee' });
      await addPerson(ctx, { name: 'Alan Turing', local: 'alan', role: 'employee' });
      await addPerson(ctx, {
        name: 'Katherine Johnson',
        local: 'katherine',
        role: 'employee',
        status: 'disabled',
      });
    },
  },
  {
    name: 'api-keys',
    async run(ctx) {
      // the full keys are thrown away at once: nobody can call with them, the list just has something to show
      const keys: Array<{ name: string; scopes: Scope[] }> = [
        { name: 'Nightly import', scopes: ['files:read', 'files:write'] },
        { name: 'Dashboard reader', scopes: ['files:read'] },
        { name: 'Audit export', scopes: ['audit:read'] },
      ];
      const fingerprintKey = keysOf(ctx).apiKey;
      for (const key of keys) {
        const created = generateKey(fingerprintKey);
        await ctx.trx('apiKeys').insert({
          id: randomUUID(),
          companyId: ctx.companyId,
          personId: ctx.visitorId,
          name: key.name,
          scopes: key.scopes,
          identifier: created.identifier,
          secretFingerprint: created.secretFingerprint,
        });
      }
    },
  },
  {
    // two company-wide files whose reports the worker builds (ready a few seconds after the first opening)
    name: 'files-with-reports',
    async run(ctx) {
      if (!ctx.services) return;
      await addFile(ctx, ctx.services, {
        name: 'sales-2026.csv',
        format: 'csv',
        delimiter: ',',
        content: demoSales(),
        columns: 8,
      });
      await addFile(ctx, ctx.services, {
        name: 'inventory.tsv',
        format: 'tsv',
        delimiter: '\t',
        content: demoInventory(),
        columns: 5,
      });
    },
  },
  {
    // a German spreadsheet export: Windows-1252, Excel's separator line and a title above the table, semicolons,
    // decimal commas, day-first dates
    name: 'european-export',
    async run(ctx) {
      if (!ctx.services) return;
      await addFile(ctx, ctx.services, {
        name: 'umsatz-2026.csv',
        format: 'csv',
        delimiter: ';',
        content: demoUmsatz(),
        columns: 6,
        encoding: 'windows-1252',
        linesBeforeHeader: 3,
        headerRow: 3,
      });
    },
  },
  {
    // a spreadsheet export from the United States: a padded title row, month-first dates, dollars, percent,
    // accounting negatives
    name: 'us-export',
    async run(ctx) {
      if (!ctx.services) return;
      await addFile(ctx, ctx.services, {
        name: 'orders-q2-2026.csv',
        format: 'csv',
        delimiter: ',',
        content: demoOrdersUs(),
        columns: 6,
        linesBeforeHeader: 2,
        headerRow: 3,
      });
    },
  },
];

// one number for the advisory lock that serialises creating and seeding the demo company
const DEMO_LOCK = 0x64656d6f; // "demo"

/** The visitor's address is fixed by the company's random id: exact to find, impossible to take first. */
function visitorAddress(companyId: string): string {
  return `visitor-${companyId}@demo.invalid`;
}

/**
 * Runs under the demo route's named system task 'demo' (api/routes/demo): the demo company is found before
 * it is known, so these reads cannot go through `scoped()`.
 */
async function findDemo(db: Knex | Knex.Transaction): Promise<DemoCompany | undefined> {
  const company = (await db('companies').where({ isDemo: true }).select('id').first()) as
    { id: string } | undefined;
  if (!company) return undefined;
  const visitor = (await db('people')
    .where({ companyId: company.id })
    .whereRaw('lower(email) = ?', [visitorAddress(company.id)])
    .select('id')
    .first()) as { id: string } | undefined;
  return visitor ? { companyId: company.id, visitorId: visitor.id } : undefined;
}

/**
 * The demo company, created and seeded when missing; every seed step not yet applied is applied. Safe to call
 * concurrently: an advisory lock lets one caller create and seed while the others wait and then reuse.
 */
export async function seedDemoCompany(
  knex: Knex,
  secretKey: string,
  steps: readonly DemoSeedStep[] = DEMO_SEED_STEPS,
  services?: DemoServices,
): Promise<DemoCompany> {
  // fast path: everything is in place (two small indexed reads)
  const existing = await findDemo(knex);
  if (existing) {
    const applied = (await knex('demoSeedSteps')
      .where({ companyId: existing.companyId })
      .pluck('name')) as string[];
    if (steps.every((s) => applied.includes(s.name))) return existing;
  }
  const hooks: Array<() => Promise<void>> = [];
  const demo = await unitOfWork(knex, async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [DEMO_LOCK]);
    let companyId = (
      (await trx('companies').where({ isDemo: true }).select('id').first()) as { id: string } | undefined
    )?.id;
    if (!companyId) {
      companyId = randomUUID();
      await trx('companies').insert({
        id: companyId,
        name: DEMO_COMPANY_NAME,
        status: 'active',
        plan: DEMO_PLAN,
        isDemo: true,
      });
    }
    let demo = await findDemo(trx);
    if (!demo) {
      // a new demo company, or one whose visitor an operator removed
      const visitorId = randomUUID();
      await trx('people').insert({
        id: visitorId,
        companyId,
        email: visitorAddress(companyId),
        name: 'Demo Visitor',
        role: DEMO_VISITOR_ROLE,
        status: 'active',
        passwordHash: null,
      });
      demo = { companyId, visitorId };
    }
    const applied = new Set(
      (await trx('demoSeedSteps').where({ companyId: demo.companyId }).pluck('name')) as string[],
    );
    for (const step of steps) {
      if (applied.has(step.name)) continue;
      await step.run({ ...demo, trx, secretKey, services, afterCommit: (fn) => hooks.push(fn) });
      await trx('demoSeedSteps').insert({ companyId: demo.companyId, name: step.name });
    }
    return demo;
  });
  // the seeding is saved; a report build that did not start is started by the hourly sweep. Bounded as
  // transact's hooks are: a Temporal that does not answer does not hold the first visitor's opening
  await runAfterCommitHooks(hooks, { waitMs: AFTER_COMMIT_WAIT_MS, onError: () => undefined });
  return demo;
}

/**
 * Opens the demo: a new read-only session on the demo company (created and seeded on first use). 404 when
 * the demo is not enabled, 403 when an operator has suspended the demo company.
 */
export async function openDemo(
  deps: Pick<IdentityDeps, 'knex' | 'config'> & { storage: Storage; temporal: Client },
  run: RunUnitOfWork,
): Promise<TokenPair> {
  const { knex, config, storage, temporal } = deps;
  if (!config.demoEnabled) throw new NotFoundError('the demo is not enabled on this service');
  // the sample files' reports are built by the worker (seed step files-with-reports)
  const demo = await seedDemoCompany(knex, config.secretKey, undefined, {
    storage,
    temporal,
    taskQueue: config.temporal.taskQueue,
  });
  return run(async (uow) => {
    // the public route's system task 'demo' acts here (no principal yet)
    const company = (await uow.trx('companies').where({ id: demo.companyId }).select('status').first()) as {
      status: string;
    };
    if (company.status !== 'active') throw new ForbiddenError('the demo is closed');
    return startSession(
      uow.trx,
      keysOf(config).session,
      { id: demo.visitorId, companyId: demo.companyId },
      { method: 'demo', demo: true, correlationId: uow.correlationId },
    );
  });
}
