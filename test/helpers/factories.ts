/** Test data: a fresh company per test (and a second one to prove isolation), people, sessions and keys. */
import { randomUUID } from 'node:crypto';
import type { PlanName } from '../../domain/plans/plans';
import { deriveKey } from '../../common/secrets';
import { hashPassword } from '../../domain/identity/passwords';
import { generateKey } from '../../domain/identity/keyFormat';
import { sessionKeys, startSession, type TokenPair } from '../../domain/identity/sessions';
import type { Role, Scope } from '../../api/routing';
import { testEnv } from './env';

export const DEFAULT_PASSWORD = 'correct horse battery staple';

export interface TestCompany {
  id: string;
  name: string;
}

export interface TestPerson {
  id: string;
  companyId: string;
  email: string;
  role: Role;
  password: string;
}

export async function createCompany(
  options: { plan?: PlanName | null; status?: 'active' | 'suspended'; name?: string } = {},
): Promise<TestCompany> {
  const company = {
    id: randomUUID(),
    name: options.name ?? `Company ${randomUUID().slice(0, 8)}`,
    status: options.status ?? 'active',
    plan: options.plan === undefined ? 'free' : options.plan,
  };
  await testEnv().knex('companies').insert(company);
  return { id: company.id, name: company.name };
}

let passwordHash: Promise<string> | undefined;

export async function createPerson(
  company: TestCompany,
  options: {
    role?: Role;
    status?: 'not_activated' | 'active' | 'disabled';
    email?: string;
    password?: string;
    name?: string;
  } = {},
): Promise<TestPerson> {
  const password = options.password ?? DEFAULT_PASSWORD;
  // hashing is slow on purpose; the default password's hash is computed once per run
  const hash =
    password === DEFAULT_PASSWORD
      ? await (passwordHash ??= hashPassword(DEFAULT_PASSWORD))
      : await hashPassword(password);
  const person = {
    id: randomUUID(),
    companyId: company.id,
    email: options.email ?? `person-${randomUUID().slice(0, 12)}@example.test`,
    name: options.name ?? 'Test Person',
    role: options.role ?? 'admin',
    status: options.status ?? 'active',
    passwordHash: hash,
  };
  await testEnv().knex('people').insert(person);
  return { id: person.id, companyId: company.id, email: person.email, role: person.role, password };
}

/** A session for the person, begun as sign-in would (without spending the sign-in bucket). */
export async function signIn(person: TestPerson, options: { demo?: boolean } = {}): Promise<TokenPair> {
  const { knex, config } = testEnv();
  return knex.transaction((trx) =>
    startSession(trx, sessionKeys(config.secretKey), person, {
      method: options.demo ? 'demo' : 'password',
      demo: options.demo,
    }),
  );
}

/** An access token for the person. */
export async function tokenFor(person: TestPerson): Promise<string> {
  return (await signIn(person)).accessToken;
}

/** An API key owned by the person, returned in full (as shown once at creation). */
export async function createApiKey(person: TestPerson, scopes: Scope[], name = 'test key'): Promise<string> {
  const { knex, config } = testEnv();
  const created = generateKey(deriveKey(config.secretKey, 'api-key'));
  await knex('apiKeys').insert({
    id: randomUUID(),
    companyId: person.companyId,
    personId: person.id,
    name,
    scopes,
    identifier: created.identifier,
    secretFingerprint: created.secretFingerprint,
  });
  return created.key;
}

/** A company with an active admin and an active employee, each with a session token. */
export async function createTeam(options: { plan?: PlanName | null } = {}) {
  const company = await createCompany(options);
  const admin = await createPerson(company, { role: 'admin' });
  const employee = await createPerson(company, { role: 'employee' });
  return {
    company,
    admin,
    employee,
    adminToken: await tokenFor(admin),
    employeeToken: await tokenFor(employee),
  };
}

export type Team = Awaited<ReturnType<typeof createTeam>>;

/** Two premium companies: `team`, the one a test works in, and `other`, which must see none of it. */
export async function createTeamAndOther(): Promise<{ team: Team; other: Team }> {
  const team = await createTeam({ plan: 'premium' });
  const other = await createTeam({ plan: 'premium' });
  return { team, other };
}
