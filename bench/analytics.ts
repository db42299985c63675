/**
 * Benchmark (issue 18): analytics and GraphQL against the direct ways of getting the same answers.
 *
 * 1. `GET /analytics` for 90 days (read from the daily rollups) against the same figures computed by direct
 *    SQL over the base tables (file_versions, reports and their JSONB results, sensitive_findings,
 *    comparisons, webhook_deliveries, analytics_requests), same run, same company, same role (the application
 *    role acting for the company, under row-level security). Target: analytics ≥ 10× faster. The answers are
 *    compared day by day first (uploads and their bytes, bytes stored, versions and files with sensitive data;
 *    the most failed rule over the range).
 * 2. A GraphQL query of 50 files with their versions and reports against the equivalent REST calls (GET
 *    /files?limit=50, then each file's versions, then each version's report, 6 at a time). Target: GraphQL ≥ 2×
 *    faster for the same data.
 *
 * Data (fixtures through the owner's connection, by SQL; the rollups are written by the triggers as the rows
 * go in, and the report build's quality step is replayed the way it writes them): 10 companies; the measured
 * one holds BENCH_FILES files (default 100,000) with one version and a ready report each over the last 90
 * days, a comparison per 10 files, deliveries; BENCH_AUDIT audit entries (default 1,000,000) and
 * BENCH_REQUESTS request-budget events (default 1,000,000) spread over the 10 companies.
 *
 *   node dist/bench/analytics.js     (BENCH_FILES, BENCH_AUDIT, BENCH_REQUESTS, BENCH_RUNS to change)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createApp } from '../api/app';
import { sessionKeys, startSession } from '../domain/identity/sessions';
import { SESSION_KEY } from '../domain/analytics/requests';
import { asWorker, median, runMain, startApiBenchRun } from './lib';

const FILES = Number(process.env.BENCH_FILES ?? 100_000);
const AUDIT = Number(process.env.BENCH_AUDIT ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const COMPANIES = 10;
const DAYS = 90;

const elapsed = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = process.hrtime.bigint();
  const value = await fn();
  return { ms: elapsed(t), value };
}

async function main(): Promise<void> {
  const { run, temporal, deps } = await startApiBenchRun();
  const { knex, appKnex, config } = run;
  let server: http.Server | undefined;
  try {
    // ---------------------------------------------------------------------------------------------- seed
    const seedStart = process.hrtime.bigint();
    const companies: Array<{ id: string; admins: string[] }> = [];
    for (let c = 0; c < COMPANIES; c++) {
      const id = randomUUID();
      await knex('companies').insert({ id, name: `Bench ${c}`, plan: 'premium' });
      const admins = Array.from({ length: 12 }, () => randomUUID());
      await knex('people').insert(
        admins.map((pid, i) => ({
          id: pid,
          companyId: id,
          email: `b${c}-${i}@example.test`,
          name: `P${i}`,
          role: 'admin',
          status: 'active',
        })),
      );
      companies.push({ id, admins });
    }
    const target = companies[0];
    const ruleId = randomUUID();
    await knex('rules').insert({
      id: ruleId,
      companyId: target.id,
      name: 'email present',
      kind: 'not_null',
      columnName: 'email',
    });
    const endpointId = randomUUID();
    await knex('webhookEndpoints').insert({
      id: endpointId,
      companyId: target.id,
      name: 'hook',
      url: 'https://example.test/h',
      events: ['ping'],
      active: false,
      secretEncrypted: 'x',
    });
    // files, datasets, versions (uploads spread over the last 90 days), then ready reports with a quality section
    await knex.raw(
      `create temporary table bench_files as
       select gen_random_uuid() as id, gen_random_uuid() as dataset_id, gen_random_uuid() as version_id,
              now() - (random() * interval '${DAYS - 1} days') as at, g as n
       from generate_series(1, ?) g`,
      [FILES],
    );
    await knex.raw(
      `insert into files (id, company_id, dataset_id, original_name, uploaded_by_person_id, visibility, created_at, updated_at)
       select id, ?, dataset_id, 'f' || n || '.csv', ?, 'company', at, at from bench_files`,
      [target.id, target.admins[0]],
    );
    await knex.raw(
      `insert into datasets (id, company_id, file_id, created_at) select dataset_id, ?, id, at from bench_files`,
      [target.id],
    );
    await knex.raw(
      `insert into file_versions (id, company_id, file_id, dataset_id, version, original_name, format, content_type, size_bytes, object_key, uploaded_by_person_id, created_at)
       select version_id, ?, id, dataset_id, 1, 'f' || n || '.csv', 'csv', 'text/csv', 1000 + n % 5000, 'none/' || version_id, ?, at from bench_files`,
      [target.id, target.admins[0]],
    );
    await knex.raw(
      `insert into reports (id, company_id, file_id, file_version_id, version, status, result, queued_at, finished_at, created_at)
       select gen_random_uuid(), ?, id, version_id, 1, case when n % 20 = 0 then 'failed' else 'ready' end,
         case when n % 20 = 0 then null else jsonb_build_object('profile', jsonb_build_object('format', 'csv', 'sheets', '[]'::jsonb),
           'sections', jsonb_build_object('quality', jsonb_build_object('score', (n % 100)::numeric, 'failedErrorRules', (n % 3 = 0)::int,
             'rules', jsonb_build_array(jsonb_build_object('ruleId', ?::text, 'name', 'email present', 'status', case when n % 3 = 0 then 'failed' else 'passed' end))))) end,
         at, at + interval '1 minute', at
       from bench_files`,
      [target.id, ruleId],
    );
    // what the report build's analytics step writes when it saves a report (domain/analytics/extension.ts)
    await knex.raw(
      `select analytics_bump(company_id, finished_at, 'quality_score_sum', '', (result->'sections'->'quality'->>'score')::numeric),
              analytics_bump(company_id, finished_at, 'quality_score_count', '', 1)
       from reports where company_id = ? and status = 'ready'`,
      [target.id],
    );
    await knex.raw(
      `select analytics_bump(company_id, finished_at, 'rule_failed', r->>'ruleId', 1)
       from reports, jsonb_array_elements(result->'sections'->'quality'->'rules') r
       where company_id = ? and status = 'ready' and r->>'status' = 'failed'`,
      [target.id],
    );
    await knex.raw(
      `insert into sensitive_findings (id, company_id, file_id, file_version_id, version, columns, created_at)
       select gen_random_uuid(), ?, id, version_id, 1, '[{"name":"email","sheet":"","kinds":["email"]}]'::jsonb, at
       from bench_files where n % 7 = 0`,
      [target.id],
    );
    await knex.raw(
      `insert into comparisons (id, company_id, file_id, base_version_id, target_version_id, base_version, target_version, status, change_count, finished_at, created_at)
       select gen_random_uuid(), ?, id, version_id, version_id, 1, 1, 'ready', n % 2, at, at from bench_files where n % 10 = 0`,
      [target.id],
    );
    await knex.raw(
      `insert into webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, event_data, event_created_at, status, created_at)
       select gen_random_uuid(), ?, ?, gen_random_uuid(), 'ping', '{}'::jsonb, at, 'pending', at from bench_files where n % 4 = 0`,
      [target.id, endpointId],
    );
    // deliveries end now (the trigger counts them on the day they end)
    await knex.raw(
      `update webhook_deliveries set status = case when random() < 0.9 then 'succeeded' else 'failed' end, updated_at = now() where company_id = ?`,
      [target.id],
    );
    // 1M audit entries and 1M request-budget events among the 10 companies (requests counted as authentication does)
    const companyIds = companies.map((c) => c.id);
    await knex.raw(
      `insert into audit_log (id, company_id, actor_person_id, action, resource_type, created_at)
       select gen_random_uuid(), (?::uuid[])[1 + g % ${COMPANIES}], null, 'file.uploaded', 'file', now() - random() * interval '${DAYS - 1} days'
       from generate_series(1, ?) g`,
      [companyIds, AUDIT],
    );
    const people = companies.flatMap((c) => c.admins.map((p) => [c.id, p]));
    await knex.raw(
      `insert into analytics_requests as r (company_id, day, person_id, api_key_id, requests)
       select company_id, day, person_id, api_key_id, count(*) from (
         select (?::uuid[][])[1 + g % ${people.length}][1] company_id,
                ((now() - random() * interval '${DAYS - 1} days') at time zone 'UTC')::date as day,
                (?::uuid[][])[1 + g % ${people.length}][2] person_id,
                case when g % 3 = 0 then ?::uuid else ((?::uuid[][])[1 + g % ${people.length}][2]) end api_key_id
         from generate_series(1, ?) g) e
       group by 1, 2, 3, 4
       on conflict (company_id, day, person_id, api_key_id) do update set requests = r.requests + excluded.requests`,
      [people, people, SESSION_KEY, people, REQUESTS] as unknown as string[],
    );
    await knex.raw('analyze');
    console.log(
      `seeded in ${(elapsed(seedStart) / 1000).toFixed(1)} s: ${FILES} files and versions (+ reports), ${AUDIT} audit entries, ${REQUESTS} request events, ${COMPANIES} companies`,
    );

    // --------------------------------------------------------------------------------------------- serve
    const tokens: string[] = [];
    for (const personId of target.admins) {
      const pair = await knex.transaction((trx) =>
        startSession(
          trx,
          sessionKeys(config.secretKey),
          { id: personId, companyId: target.id },
          { method: 'password' },
        ),
      );
      tokens.push(pair.accessToken);
    }
    let tokenTurn = 0;
    const token = () => tokens[tokenTurn++ % tokens.length];
    server = http.createServer(createApp(deps).callback());
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const get = async (path: string, t = token()) => {
      const res = await fetch(base + path, { headers: { authorization: `Bearer ${t}` } });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };

    // -------------------------------------------------------------------------------- 1. analytics vs SQL
    const to = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - (DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    const direct = () =>
      asWorker(target.id, async () => {
        const q = (sql: string) => appKnex.raw(sql, { c: target.id, from, to });
        const day = (col: string) => `to_char((${col} at time zone 'UTC')::date, 'YYYY-MM-DD')`;
        const range = (col: string) => `(${col} at time zone 'UTC')::date between :from::date and :to::date`;
        const [uploads, storedBefore, reports, rules, sensitive, comparisons, deliveries, requests] =
          await Promise.all([
            q(`select ${day('created_at')} d, count(*) filter (where version = 1) files, count(*) filter (where version > 1) versions, sum(size_bytes) bytes
             from file_versions where company_id = :c and ${range('created_at')} group by 1`),
            // the bytes stored at the end of a day: what was stored before the range plus the range's uploads
            // up to that day (exact here, where nothing is deleted: the base tables keep no deleted version)
            q(`select coalesce(sum(size_bytes), 0) n from file_versions
             where company_id = :c and (created_at at time zone 'UTC')::date < :from::date`),
            q(`select ${day('finished_at')} d, count(*) filter (where status = 'ready') ready, count(*) filter (where status = 'failed') failed,
               avg((result->'sections'->'quality'->>'score')::numeric) filter (where status = 'ready') score
             from reports where company_id = :c and ${range('finished_at')} group by 1`),
            q(`select r->>'ruleId' rule, count(*) n from reports, jsonb_array_elements(result->'sections'->'quality'->'rules') r
             where company_id = :c and status = 'ready' and r->>'status' = 'failed' and ${range('finished_at')} group by 1`),
            q(
              `select ${day('created_at')} d, count(*) n, count(distinct file_id) files from sensitive_findings where company_id = :c and jsonb_array_length(columns) > 0 and ${range('created_at')} group by 1`,
            ),
            q(`select ${day('finished_at')} d, count(*) ready, count(*) filter (where change_count > 0) changed
             from comparisons where company_id = :c and status = 'ready' and ${range('finished_at')} group by 1`),
            q(`select ${day('updated_at')} d, endpoint_id, count(*) filter (where status = 'succeeded') ok, count(*) filter (where status = 'failed') failed
             from webhook_deliveries where company_id = :c and ${range('updated_at')} group by 1, 2`),
            q(`select day d, count(distinct person_id) active, sum(requests) filter (where api_key_id <> '${SESSION_KEY}') api
             from analytics_requests where company_id = :c and day between :from::date and :to::date group by 1`),
          ]);
        return {
          uploads,
          storedBefore,
          reports,
          rules,
          sensitive,
          comparisons,
          deliveries,
          requests,
        } as Record<string, { rows: Array<Record<string, unknown>> }>;
      });

    // same answer first
    const answer = await get(`/analytics?from=${from}&to=${to}&granularity=day`);
    const sql = await direct();
    const byDay = new Map(sql.uploads.rows.map((x) => [x.d as string, x]));
    const sensitiveByDay = new Map(sql.sensitive.rows.map((x) => [x.d as string, x]));
    let checked = 0;
    let stored = Number(sql.storedBefore.rows[0].n);
    for (const p of answer.periods as Array<{
      start: string;
      uploads: { files: number };
      bytesUploaded: number;
      bytesStored: number;
      versionsWithSensitiveData: number;
      filesWithSensitiveData: number;
    }>) {
      const r = byDay.get(p.start);
      const files = r ? Number(r.files) : 0;
      const bytes = r ? Number(r.bytes) : 0;
      stored += bytes;
      if (files !== p.uploads.files || bytes !== p.bytesUploaded || stored !== p.bytesStored)
        throw new Error(
          `analytics and SQL differ on ${p.start}: files ${p.uploads.files} vs ${files}, ` +
            `bytes ${p.bytesUploaded} vs ${bytes}, stored ${p.bytesStored} vs ${stored}`,
        );
      const f = sensitiveByDay.get(p.start);
      const flagged = { versions: f ? Number(f.n) : 0, files: f ? Number(f.files) : 0 };
      if (flagged.versions !== p.versionsWithSensitiveData || flagged.files !== p.filesWithSensitiveData)
        throw new Error(
          `analytics and SQL differ on ${p.start}: sensitive versions ${p.versionsWithSensitiveData} vs ` +
            `${flagged.versions}, files ${p.filesWithSensitiveData} vs ${flagged.files}`,
        );
      checked += files;
    }
    const ruleSql = Number(sql.rules.rows[0]?.n ?? 0);
    const ruleApi = (answer.topFailedRules as Array<{ failures: number }>)[0]?.failures ?? 0;
    if (checked !== FILES || ruleSql !== ruleApi)
      throw new Error(`totals differ: ${checked}/${FILES}, rules ${ruleApi}/${ruleSql}`);
    console.log(
      `answers equal: ${answer.periods.length} days, ${checked} uploads, ${stored} bytes stored at the end, ` +
        `${ruleApi} failed rules`,
    );

    const apiTimes: number[] = [];
    const sqlTimes: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      apiTimes.push((await timed(() => get(`/analytics?from=${from}&to=${to}&granularity=day`))).ms);
      sqlTimes.push((await timed(direct)).ms);
    }
    const a = median(apiTimes);
    const s = median(sqlTimes);
    console.log(
      `GET /analytics (90 days, through HTTP): ${a.toFixed(1)} ms; direct SQL over the base tables: ${s.toFixed(1)} ms; ` +
        `ratio ${(s / a).toFixed(1)}× (target ≥ 10×) — median of ${RUNS}`,
    );

    // ----------------------------------------------------------------------------- 2. GraphQL vs REST
    const query = `{ files(first: 50) { nodes { id originalName versions(first: 10) { nodes { version sizeBytes
      report { status build finishedAt profile sections } } } } } }`;
    const graphql = async () => {
      const res = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      const body = (await res.json()) as any;
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data.files.nodes as Array<{ id: string; versions: { nodes: unknown[] } }>;
    };
    const rest = async () => {
      const t = token(); // 1 + 50 + 50 calls: within one person's 300 a minute
      const files = (await get('/files?limit=50', t)).data as Array<{ id: string }>;
      const out: Array<{ id: string; versions: unknown[] }> = [];
      const queue = [...files];
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          for (let f = queue.shift(); f; f = queue.shift()) {
            const versions = (await get(`/files/${f.id}/versions?limit=10`, t)).data as Array<{
              version: number;
            }>;
            const reports = [];
            for (const v of versions)
              reports.push(await get(`/files/${f.id}/versions/${v.version}/report`, t));
            out.push({ id: f.id, versions: reports });
          }
        }),
      );
      return out;
    };
    const g0 = await graphql();
    const r0 = await rest();
    if (
      g0.length !== 50 ||
      r0.length !== 50 ||
      g0.flatMap((f) => f.versions.nodes).length !== r0.flatMap((f) => f.versions).length
    )
      throw new Error('GraphQL and REST returned different data');
    const gTimes: number[] = [];
    const rTimes: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      gTimes.push((await timed(graphql)).ms);
      rTimes.push((await timed(rest)).ms);
    }
    const g = median(gTimes);
    const r = median(rTimes);
    console.log(
      `50 files with versions and reports: GraphQL ${g.toFixed(1)} ms (1 request); REST ${r.toFixed(1)} ms (101 requests, 6 at a time); ` +
        `ratio ${(r / g).toFixed(1)}× (target ≥ 2×) — median of ${RUNS}`,
    );
  } finally {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await temporal.connection.close().catch(() => undefined);
    await run.close();
  }
}

runMain(main);
