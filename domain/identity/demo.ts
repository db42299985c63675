/**
 * The demo company: created on first use, with sample data, and shared read-only by every demo visitor.
 *
 * To show a new kind of data in the demo, append a step to DEMO_SEED_STEPS with a new name. Steps run once
 * per demo company, in order, each in the transaction that records it; a step added after the demo company
 * exists is applied at the next opening. Never rename a step (it would run again).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { unitOfWork } from '../../db/unitOfWork';
import { ForbiddenError, NotFoundError } from '../../common/errors';
import { keysOf } from './keys';
import type { PlanName } from '../plans/plans';
import type { IdentityDeps, RunUnitOfWork } from './deps';
import { startSession, type TokenPair } from './sessions';
import { generateKey } from './keyFormat';
import type { Role, Scope } from './scopes';

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
): Promise<DemoCompany> {
  // fast path: everything is in place (two small indexed reads)
  const existing = await findDemo(knex);
  if (existing) {
    const applied = (await knex('demoSeedSteps')
      .where({ companyId: existing.companyId })
      .pluck('name')) as string[];
    if (steps.every((s) => applied.includes(s.name))) return existing;
  }
  return unitOfWork(knex, async (trx) => {
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
      await step.run({ ...demo, trx, secretKey });
      await trx('demoSeedSteps').insert({ companyId: demo.companyId, name: step.name });
    }
    return demo;
  });
}

/**
 * Opens the demo: a new read-only session on the demo company (created and seeded on first use). 404 when
 * the demo is not enabled, 403 when an operator has suspended the demo company.
 */
export async function openDemo(
  deps: Pick<IdentityDeps, 'knex' | 'config'>,
  run: RunUnitOfWork,
): Promise<TokenPair> {
  const { knex, config } = deps;
  if (!config.demoEnabled) throw new NotFoundError('the demo is not enabled on this service');
  const demo = await seedDemoCompany(knex, config.secretKey);
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
