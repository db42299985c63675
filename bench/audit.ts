/**
 * Benchmark of the audit log (issue 15): 1M audit entries for one company among 10 companies (the 9 others
 * hold 20k each), then in the same run:
 *
 * 1. GET /audit-log, first page against the page after half the matches (500k entries without a filter),
 *    with each filter: median latency over BENCH_AUDIT_SAMPLES requests each, alternating; the deep page must
 *    cost at most 1.5× the first (keyset pagination). The plan of each deep page, by EXPLAIN (ANALYZE,
 *    BUFFERS), is printed: an index scan on the filter's index, no sort of the company's rows.
 * 2. The cost of the audit entry on a write route (PATCH /files/:id, a visibility change by 128 admins, each on
 *    their own file, concurrency 16): throughput with the entry written against not written (the
 *    `auditWrites` switch, benchmarks only), rounds alternating; the target is under 5%. 60 rounds of 150
 *    requests a side (not 15 of 600, as until 2026-11-27): the same requests, alternating four times as often,
 *    so that the machine's drift over seconds hits both sides alike. With the entry written on both sides (an
 *    A/A run) this measure gives paired medians of −0.3% and −0.2%; the coarser rounds spread 0–8% run to run.
 *
 *   node dist/bench/audit.js   (BENCH_AUDIT_ROWS, BENCH_AUDIT_SAMPLES, BENCH_REQUESTS, BENCH_ROUNDS)
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { raw } from 'objection';
import { createApp } from '../api/app';
import { Cursors } from '../api/lists';
import { withCompany } from '../db/unitOfWork';
import { auditListName, auditLogOf, type AuditFilters } from '../domain/audit/queries';
import { auditWrites } from '../domain/audit/record';
import { median, runMain, sessionTokens, startApiBenchRun } from './lib';

const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 1_000_000);
const OTHER_ROWS = Number(process.env.BENCH_AUDIT_OTHER_ROWS ?? 20_000);
const SAMPLES = Number(process.env.BENCH_AUDIT_SAMPLES ?? 40);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 150);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const CONCURRENCY = 16;
const PEOPLE = 128; // enough people that 15 paired rounds stay within each session's request budget
const ACTIONS = [
  ['file.uploaded', 'file'],
  ['file.deleted', 'file'],
  ['file.visibility_changed', 'file'],
  ['rule.created', 'rule'],
  ['comment.created', 'comment'],
  ['api_key.created', 'api_key'],
  ['session.started', 'session'],
  ['webhook_endpoint.updated', 'webhook_endpoint'],
];

function get(
  port: number,
  path: string,
  token: string,
): Promise<{ status: number; ms: number; body: string }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(
      { host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const { run, temporal, deps } = await startApiBenchRun();
  const { config, knex, appKnex } = run;
  let server: http.Server | undefined;
  try {
    // 10 companies; the first holds the 1M entries, its 128 admins call the API
    const companies = Array.from({ length: 10 }, () => randomUUID());
    await knex('companies').insert(companies.map((id, i) => ({ id, name: `Audit ${i}`, plan: 'premium' })));
    const [target] = companies;
    const people = Array.from({ length: PEOPLE }, (_, i) => ({
      id: randomUUID(),
      companyId: target,
      email: `audit-${i}@example.test`,
      role: 'admin',
      status: 'active',
    }));
    await knex('people').insert(people);
    const keys = Array.from({ length: 10 }, () => randomUUID());
    const hot = randomUUID();
    const start = new Date(Date.now() - 300 * 24 * 3600_000);
    const seed = async (companyId: string, n: number) =>
      knex.raw(
        `insert into audit_log (id, company_id, actor_person_id, actor_api_key_id, actor_type, actor_key_prefix,
                                action, resource_type, resource_id, outcome, client_address, details, created_at)
         select md5(:salt || g::text)::uuid, :companyId,
                (:people::uuid[])[1 + g % 20],
                case when g % 3 = 0 then (:keys::uuid[])[1 + (g / 3) % 10] end,
                case when g % 3 = 0 then 'apiKey' else 'person' end,
                case when g % 3 = 0 then 'svc_live_bench' || ((g / 3) % 10) end,
                (:actions::text[])[1 + g % 8], (:types::text[])[1 + g % 8],
                case when g % 1000 = 7 then :hot else md5(:salt || 'r' || g::text) end,
                'success', '198.18.0.1', '{"fields":["name"]}'::jsonb,
                :start::timestamptz + g * (interval '25 seconds' * :stretch)
           from generate_series(1, :n) g`,
        {
          salt: companyId,
          companyId,
          people: people.slice(0, 20).map((p) => p.id),
          keys,
          actions: ACTIONS.map((a) => a[0]),
          types: ACTIONS.map((a) => a[1]),
          hot,
          start: start.toISOString(),
          stretch: ROWS / n,
          n,
        },
      );
    let t = Date.now();
    await seed(target, ROWS);
    for (const other of companies.slice(1)) await seed(other, OTHER_ROWS);
    // a table in its steady state, as in service: vacuumed and analysed, and a checkpoint so the writes measured
    // below do not pay for the seeding's pages
    await knex.raw('vacuum analyze audit_log');
    await knex.raw('checkpoint');
    console.log(
      `seeded ${ROWS} entries for one company and ${OTHER_ROWS} for each of 9 others in ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );

    const tokens = await sessionTokens(knex, config, people);
    let turn = 0;
    const token = () => tokens[turn++ % tokens.length];

    const app = createApp(deps);
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;

    // --- 1. first page against the deep page, per filter
    // the entries span ROWS × 25 s; the time filter takes its middle half
    const span = ROWS * 25_000;
    const mid = new Date(start.getTime() + span * 0.25).toISOString();
    const end = new Date(start.getTime() + span * 0.75).toISOString();
    const filterSets: Array<[string, AuditFilters]> = [
      ['no filter', {}],
      ['actorId', { actorId: people[0].id }],
      ['apiKeyId', { apiKeyId: keys[0] }],
      ['action (exact)', { action: 'comment.created' }],
      ['action (prefix file.*)', { action: 'file.*' }],
      ['resourceType', { resourceType: 'rule' }],
      ['resourceId', { resourceId: hot }],
      ['from + to', { from: mid, to: end }],
    ];
    const cursors = new Cursors(config.secretKey);
    const reader = { companyId: target, role: 'admin' as const };
    const captured: Array<{ sql: string; bindings: unknown[] }> = [];
    appKnex.on('query', (q: { sql: string; bindings: unknown[] }) => {
      if (q.sql.includes('from "audit_log"')) captured.push({ sql: q.sql, bindings: q.bindings });
    });
    const rows: string[] = [];
    let worst = 0;
    for (const [name, filters] of filterSets) {
      const matches = await auditLogOf(reader, knex, filters).resultSize();
      const skip = name === 'no filter' ? Math.min(500_000, matches - 21) : Math.floor(matches / 2);
      const position = (await auditLogOf(reader, knex, filters)
        .select('auditLog.id')
        .select(raw(`to_char(audit_log.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as t`))
        .orderBy([
          { column: 'auditLog.createdAt', order: 'desc' },
          { column: 'auditLog.id', order: 'desc' },
        ])
        .offset(skip)
        .first()) as unknown as { id: string; t: string };
      const list = auditListName(filters);
      const cursor = cursors.seal(list, target, { t: position.t, i: position.id });
      const qs = new URLSearchParams(Object.entries(filters) as Array<[string, string]>);
      const firstPath = `/audit-log?${qs.toString()}`;
      qs.set('cursor', cursor);
      const deepPath = `/audit-log?${qs.toString()}`;
      for (let i = 0; i < 5; i++) {
        for (const p of [firstPath, deepPath]) {
          const r = await get(port, p, token());
          if (r.status !== 200) throw new Error(`${p}: ${r.status} ${r.body}`);
        }
      }
      const first: number[] = [];
      const deep: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        first.push((await get(port, firstPath, token())).ms);
        deep.push((await get(port, deepPath, token())).ms);
      }
      // the plan of the deep page, as the API ran it
      captured.length = 0;
      const last = await get(port, deepPath, token());
      const page = JSON.parse(last.body) as { data: unknown[] };
      const query = captured[captured.length - 1];
      const plan = (await withCompany(appKnex, target, (trx) =>
        trx.raw(
          `explain (analyze, buffers, costs off) ${query.sql.replace(/\$\d+/g, '?')}`,
          query.bindings as never,
        ),
      )) as { rows: Array<{ 'QUERY PLAN': string }> };
      const ratio = median(deep) / median(first);
      worst = Math.max(worst, ratio);
      rows.push(
        `  ${name.padEnd(24)} matches ${String(matches).padStart(8)}   first ${median(first).toFixed(2).padStart(6)} ms   deep (after ${String(skip).padStart(6)}) ${median(deep).toFixed(2).padStart(6)} ms   ratio ${ratio.toFixed(2)}   page ${page.data.length}`,
      );
      console.log(`EXPLAIN of the deep page, ${name}:`);
      for (const line of plan.rows
        .map((r) => r['QUERY PLAN'])
        .filter((l) => !/^\s*(Planning|Execution|Buffers)/.test(l) || /Execution/.test(l)))
        console.log(`    ${line}`);
    }
    console.log(`GET /audit-log?limit=20 (default), ${SAMPLES} requests each, alternating, median latency:`);
    for (const r of rows) console.log(r);
    console.log(`  worst deep/first ratio: ${worst.toFixed(2)} (target ≤ 1.5)`);

    // --- 2. the audit entry's cost on a write route
    const files = people.map((p) => ({ id: randomUUID(), datasetId: randomUUID(), personId: p.id }));
    await knex('files').insert(
      files.map((f) => ({
        id: f.id,
        companyId: target,
        datasetId: f.datasetId,
        originalName: 'bench.csv',
        uploadedByPersonId: f.personId,
      })),
    );
    await knex('datasets').insert(files.map((f) => ({ id: f.datasetId, companyId: target, fileId: f.id })));
    const flips = new Array<number>(PEOPLE).fill(0);
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const patch = (i: number) =>
      new Promise<void>((resolve, reject) => {
        const who = i % PEOPLE;
        const body = JSON.stringify({ visibility: flips[who]++ % 2 === 0 ? 'company' : 'private' });
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'PATCH',
            path: `/files/${files[who].id}`,
            agent,
            headers: { authorization: `Bearer ${tokens[who]}`, 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            res.on('end', () =>
              res.statusCode === 200 ? resolve() : reject(new Error(`PATCH ${res.statusCode}`)),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    // CPU per request, besides throughput: this process (the API and the driver) and the PostgreSQL backends of
    // this run's database, from /proc. Unlike req/s it hardly moves with other work on the machine, and on a
    // saturated machine throughput is its inverse.
    const backendPids = async () =>
      (
        (
          await knex.raw(
            `select pid from pg_stat_activity
              where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`,
          )
        ).rows as Array<{ pid: number }>
      ).map((r) => r.pid);
    const ticks = (pids: number[]) =>
      pids.reduce((sum, pid) => {
        try {
          const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
          return sum + Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
        } catch {
          return sum; // a backend that ended
        }
      }, 0);
    const tickMs = 1000 / 100; // USER_HZ
    const cpu: Record<'on' | 'off', { node: number; db: number; requests: number }> = {
      on: { node: 0, db: 0, requests: 0 },
      off: { node: 0, db: 0, requests: 0 },
    };
    const drive = async (count: number, side?: 'on' | 'off') => {
      let next = 0;
      const pids = side ? await backendPids() : [];
      const dbBefore = ticks(pids);
      const nodeBefore = process.cpuUsage();
      const began = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < count) await patch(next++);
        }),
      );
      const seconds = Number(process.hrtime.bigint() - began) / 1e9;
      if (side) {
        const node = process.cpuUsage(nodeBefore);
        cpu[side].node += (node.user + node.system) / 1000;
        cpu[side].db += (ticks(pids) - dbBefore) * tickMs;
        cpu[side].requests += count;
      }
      return count / seconds;
    };
    const written = await knex('auditLog').where({ companyId: target }).count({ n: '*' }).first();
    auditWrites.enabled = true;
    await drive(200);
    auditWrites.enabled = false;
    await drive(200);
    const on: number[] = [];
    const off: number[] = [];
    t = Date.now();
    // paired rounds, the order swapped each time, so drift in the machine's load hits both sides alike
    for (let round = 0; round < ROUNDS; round++) {
      for (const enabled of round % 2 === 0 ? [false, true] : [true, false]) {
        auditWrites.enabled = enabled;
        (enabled ? on : off).push(await drive(REQUESTS, enabled ? 'on' : 'off'));
      }
    }
    auditWrites.enabled = true;
    const pairedCost = median(on.map((r, i) => 1 - r / off[i]));
    agent.destroy();
    const after = await knex('auditLog').where({ companyId: target }).count({ n: '*' }).first();
    const added = Number((after as { n: string }).n) - Number((written as { n: string }).n);
    const onRps = (ROUNDS * REQUESTS) / on.reduce((s, r) => s + REQUESTS / r, 0);
    const offRps = (ROUNDS * REQUESTS) / off.reduce((s, r) => s + REQUESTS / r, 0);
    console.log(
      `PATCH /files/:id (visibility change), ${ROUNDS} rounds × ${REQUESTS} requests each side, concurrency ${CONCURRENCY}, ${((Date.now() - t) / 1000).toFixed(1)} s:`,
    );
    console.log(
      `  audit entry on : ${onRps.toFixed(0)} req/s   (rounds ${on.map((r) => r.toFixed(0)).join(', ')})`,
    );
    console.log(
      `  audit entry off: ${offRps.toFixed(0)} req/s   (rounds ${off.map((r) => r.toFixed(0)).join(', ')})`,
    );
    console.log(`  entries written with it on: ${added} (expected ${ROUNDS * REQUESTS + 200})`);
    const perRequest = (side: 'on' | 'off') => {
      const c = cpu[side];
      return { node: c.node / c.requests, db: c.db / c.requests, total: (c.node + c.db) / c.requests };
    };
    const cpuOn = perRequest('on');
    const cpuOff = perRequest('off');
    for (const [label, c] of [
      ['on ', cpuOn],
      ['off', cpuOff],
    ] as const) {
      console.log(
        `  CPU per request, entry ${label}: ${c.total.toFixed(3)} ms (this process ${c.node.toFixed(3)} ms, PostgreSQL backends ${c.db.toFixed(3)} ms)`,
      );
    }
    console.log(
      `  the audit entry costs ${((1 - cpuOff.total / cpuOn.total) * 100).toFixed(1)}% of the route's throughput by CPU per request (on a saturated machine throughput is its inverse: 1 − off/on; target < 5%)`,
    );
    console.log(
      `  the audit entry costs ${((1 - onRps / offRps) * 100).toFixed(1)}% of the route's throughput over all rounds, ${(pairedCost * 100).toFixed(1)}% as the median of the paired rounds (target < 5%)`,
    );
  } finally {
    auditWrites.enabled = true;
    if (server) {
      server.closeAllConnections();
      server.close();
    }
    await temporal.connection.close().catch(() => undefined);
    await run.close();
  }
}

runMain(main);
