/**
 * Benchmark: what the platform machinery (request budget counted in PostgreSQL, Idempotency-Key, client
 * address) costs on an authenticated list call. One run starts two in-process servers on loopback over one
 * fresh database — the same Koa app with the machinery on, and with it off — and drives GET /api-keys (a
 * page-number list, session token) at a fixed concurrency for a fixed count, alternating rounds so drift
 * affects both. Prints requests per second, p50/p99 latency of each and the throughput ratio. A third server,
 * the machinery on over the owner's connection (no row-level security), gives the cost of row-level security
 * in the same run.
 *
 *   node dist/bench/platform.js            (BENCH_REQUESTS, BENCH_CONCURRENCY, BENCH_ROUNDS to change)
 *
 * The callers are 64 admins of one company, taken in turn, so that no one exceeds the 300-a-minute session
 * budget: every request is counted in full and none is refused (the run fails if one is).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import knexFactory from 'knex';
import { createApp } from '../api/app';
import { generateKey } from '../domain/identity/keyFormat';
import { deriveKey } from '../common/secrets';
import { knexConfig } from '../db/knex';
import {
  loadRound,
  mergeRounds,
  runMain,
  seedAdmins,
  sessionTokens,
  startApiBenchRun,
  type LoadResult,
} from './lib';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PEOPLE = 64;
const KEY_COMPANIES = 24;

type Result = LoadResult;

/** A fixed number of GETs at a fixed concurrency over keep-alive connections. */
async function drive(port: number, path: string, tokens: string[], count: number): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const failures: string[] = [];
  const one = (i: number) =>
    new Promise<number>((resolve, reject) => {
      const token = tokens[i % tokens.length];
      const started = process.hrtime.bigint();
      const req = http.request(
        { host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 200) failures.push(String(res.statusCode));
            resolve(Number(process.hrtime.bigint() - started) / 1e6);
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  const result = await loadRound(count, CONCURRENCY, one);
  agent.destroy();
  if (failures.length > 0)
    throw new Error(`${failures.length} requests failed: ${failures.slice(0, 5).join(', ')}`);
  return result;
}

const merge = mergeRounds;

async function main(): Promise<void> {
  // fixtures through the owner's connection; the apps act as the application role (db/rls.ts), as served
  const { run: benchRun, temporal, deps } = await startApiBenchRun();
  const { config, knex } = benchRun;
  // not createKnex: objection's default knex stays the application role's
  const ownerKnex = knexFactory(knexConfig(config.databaseUrl, 20));
  const servers: http.Server[] = [];
  try {
    // one company, 64 admins with a session each, 30 API keys to list
    const { companyId, people } = await seedAdmins(knex, PEOPLE);
    const { passwordHash } = people[0];
    const keyKey = deriveKey(config.secretKey, 'api-key');
    await knex('apiKeys').insert(
      Array.from({ length: 30 }, (_, i) => {
        const k = generateKey(keyKey);
        return {
          id: randomUUID(),
          companyId,
          personId: people[i % PEOPLE].id,
          name: `key ${i}`,
          scopes: ['files:read'],
          identifier: k.identifier,
          secretFingerprint: k.secretFingerprint,
        };
      }),
    );
    const tokens = await sessionTokens(knex, config, people);
    // API keys of Premium companies (600 a minute each), for the key path: its caller lookup costs a query
    const apiKeys: string[] = [];
    for (let c = 0; c < KEY_COMPANIES; c++) {
      const id = randomUUID();
      const ownerId = randomUUID();
      await knex('companies').insert({ id, name: `Bench ${c}`, plan: 'premium' });
      await knex('people').insert({
        id: ownerId,
        companyId: id,
        email: `bench-owner-${c}@example.test`,
        role: 'admin',
        status: 'active',
        passwordHash,
      });
      const k = generateKey(keyKey);
      await knex('apiKeys').insert({
        id: randomUUID(),
        companyId: id,
        personId: ownerId,
        name: 'bench',
        scopes: ['files:read'],
        identifier: k.identifier,
        secretFingerprint: k.secretFingerprint,
      });
      apiKeys.push(k.key);
    }

    const listen = async (app: ReturnType<typeof createApp>) => {
      const server = http.createServer(app.callback());
      server.keepAliveTimeout = 65_000;
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return (server.address() as AddressInfo).port;
    };
    const on = await listen(createApp(deps));
    const off = await listen(createApp(deps, { withoutPlatformMachinery: true }));
    // the same app (machinery on) over the owner's connection: no row-level security, as before it existed
    const ownerOn = await listen(createApp({ ...deps, knex: ownerKnex }));

    const scenarios = [
      {
        title: 'GET /api-keys?limit=20: authenticated page-number list, session token (the target)',
        path: '/api-keys?limit=20',
        tokens,
        perMinute: PEOPLE * 300,
      },
      {
        title: 'GET /subscriptions/me: API key (caller lookup by key identifier, then the company budget)',
        path: '/subscriptions/me',
        tokens: apiKeys,
        perMinute: KEY_COMPANIES * 600,
      },
    ];
    for (const scenario of scenarios) {
      // stay under every caller's budget: each request is counted in full and none is refused
      if (2 * (REQUESTS * ROUNDS + 200) > scenario.perMinute) {
        throw new Error(`BENCH_REQUESTS × BENCH_ROUNDS too large for ${scenario.path}`);
      }
      await drive(off, scenario.path, scenario.tokens, 200); // warm-up (JIT, pools, prepared statements)
      await drive(on, scenario.path, scenario.tokens, 200);
      await drive(ownerOn, scenario.path, scenario.tokens, 200);
      const withMachinery: Result[] = [];
      const without: Result[] = [];
      const withoutRls: Result[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        without.push(await drive(off, scenario.path, scenario.tokens, REQUESTS));
        withMachinery.push(await drive(on, scenario.path, scenario.tokens, REQUESTS));
        withoutRls.push(await drive(ownerOn, scenario.path, scenario.tokens, REQUESTS));
      }
      const a = merge(withMachinery);
      const b = merge(without);
      const fmt = (r: Result) =>
        `${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms`;
      const ratio = a.rps / b.rps;
      console.log(scenario.title);
      console.log(`  ${ROUNDS} rounds × ${REQUESTS} requests each side, concurrency ${CONCURRENCY}`);
      console.log(`  machinery on : ${fmt(a)}`);
      console.log(`  machinery off: ${fmt(b)}`);
      console.log(
        `  throughput ratio on/off: ${ratio.toFixed(3)} (the machinery costs ${((1 - ratio) * 100).toFixed(1)}% of throughput; target < 25%)`,
      );
      console.log(`  p99 ratio on/off: ${(a.p99 / b.p99).toFixed(3)}`);
      const c = merge(withoutRls);
      console.log(`  machinery on, owner's connection (no row-level security): ${fmt(c)}`);
      console.log(
        `  row-level security ratio (app role / owner): ${(a.rps / c.rps).toFixed(3)} throughput, ${(a.p99 / c.p99).toFixed(3)} p99`,
      );
    }
  } finally {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    await ownerKnex.destroy();
    await temporal.connection.close().catch(() => undefined);
    await benchRun.close();
  }
}

runMain(main);
