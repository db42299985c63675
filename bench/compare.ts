/**
 * Comparison benchmark (issue 14), in one run:
 *   (a) two versions of 100k rows × 12 columns: 1% of rows changed, 0.5% added, 0.5% removed, rows shuffled;
 *   (b) two 25 MB CSV versions (the upload limit; ~270k rows × 12), same changes.
 * For each: the service's comparison, activity start to result saved (domain/comparisons/run.ts
 * runComparison against the local PostgreSQL and MinIO, key column `id`), against daff 1.4.2 end to end
 * from the same two files on disk (csv-parse + daff compareTables + TableDiff, primary key `id`). Each side
 * runs in its own child process so that its peak memory (maxRSS) is its own. The service acts as the worker
 * does: the application role, row-level security applied. Measured twice: as the service runs it (the
 * workflow waits for both versions' reports, built at upload, and the comparison takes their inferred
 * types) and without a ready report (the fallback: every cell classified); both in the same run as daff.
 * Cold and warm: cold is the first comparison of a fresh process; warm is measured after the same process
 * compared a small pair (5k rows) first, as a worker that has compared before runs it (V8's JIT has compiled
 * its code) — daff's warm side likewise diffs the small pair first. Each side is compared with daff in the same
 * state. Also printed: the comparison time against one report build of the target version.
 *
 *   node dist/bench/compare.js [--runs 1] [--case 100k|25mb]   (--case: that case only)
 *
 * Targets (2-core machine): ≥ 5× faster than daff on both, peak memory ≤ half of daff's.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
// Each child process loads only what its side needs (the service: config, knex, storage and the comparison
// code; daff: csv-parse and daff), so neither side's peak RSS carries the other's modules or the bench's
// own (bench/lib.ts brings the Temporal client, the API's types, the mailer: ~45 MB): see README. Hence the
// typed `require`s inside the functions.
/* eslint-disable @typescript-eslint/no-require-imports */
import type { RunOutcome } from '../domain/comparisons/run';

const MB = 1024 * 1024;
const run = promisify(execFile);
const args = process.argv.slice(2);
const CITIES = ['Lyon', 'Nice', 'Paris', 'Lille', 'Nantes', 'Brest', 'Metz', 'Caen'];

/** a deterministic pseudo-random generator */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

function row(id: number, r: () => number): string[] {
  const day = new Date(Date.UTC(2024, 0, 1) + Math.floor(r() * 365) * 86_400_000).toISOString().slice(0, 10);
  return [
    String(id),
    `customer ${Math.floor(r() * 50_000)}`,
    CITIES[Math.floor(r() * CITIES.length)],
    String(Math.floor(r() * 1000)),
    (r() * 10_000).toFixed(2),
    day,
    `${day}T${String(Math.floor(r() * 24)).padStart(2, '0')}:15:00`,
    r() < 0.5 ? 'true' : 'false',
    r() < 0.1 ? '' : `note ${Math.floor(r() * 1e6)}`,
    (r() * 100).toFixed(3),
    String(Math.floor(r() * 1e9)),
    `sku-${Math.floor(r() * 1e5)}`,
  ];
}
const HEADER = ['id', 'customer', 'city', 'qty', 'amount', 'day', 'at', 'paid', 'note', 'rate', 'ref', 'sku'];

/** base and target: `rows` rows; target with 1% changed, 0.5% removed, 0.5% added, shuffled. */
async function writePair(dir: string, name: string, rows: number) {
  const r = rng(rows);
  const base: string[][] = [];
  for (let i = 1; i <= rows; i++) base.push(row(i, r));
  const target: string[][] = [];
  let changed = 0;
  let removed = 0;
  for (const b of base) {
    const x = r();
    if (x < 0.005) {
      removed++;
      continue;
    }
    if (x < 0.015) {
      changed++;
      const c = [...b];
      c[3] = String(Number(c[3]) + 1);
      c[2] = 'Changed';
      target.push(c);
    } else target.push(b);
  }
  const added = Math.round(rows * 0.005);
  for (let i = 0; i < added; i++) target.push(row(rows + 1 + i, r));
  for (let i = target.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [target[i], target[j]] = [target[j], target[i]];
  }
  const csv = (t: string[][]) =>
    (function* () {
      yield HEADER.join(',') + '\n';
      for (const x of t) yield x.join(',') + '\n';
    })();
  const { writeLines } = require('./lib') as typeof import('./lib');
  const baseFile = path.join(dir, `${name}-base.csv`);
  const targetFile = path.join(dir, `${name}-target.csv`);
  await writeLines(baseFile, csv(base));
  await writeLines(targetFile, csv(target));
  return { baseFile, targetFile, expected: { added, removed, changed } };
}

/** the number of rows whose CSV is about `bytes` */
function rowsFor(bytes: number): number {
  const r = rng(7);
  let total = 0;
  for (let i = 0; i < 1000; i++) total += row(100_000 + i, r).join(',').length + 1;
  return Math.floor((bytes / (total / 1000)) * 0.985);
}

/** One side's runs: times, peak RSS, and peak RSS above the RSS when the timed work starts (MB). */
interface Side {
  ms: number[];
  rss: number[];
  growth: number[];
}

// ---- child processes --------------------------------------------------------------------------------

async function childDaff(baseFile: string, targetFile: string, warmUp?: string): Promise<void> {
  // modules loaded before the clock starts, as the service side's are (a running process has them)
  const { parse } = require('csv-parse/sync') as typeof import('csv-parse/sync');
  const daff = require('daff') as any;
  const read = async (f: string) => parse(await readFile(f), { relax_column_count: true }) as string[][];
  const diff = async (b: string, t: string) => {
    const t1 = new daff.TableView(await read(b));
    const t2 = new daff.TableView(await read(t));
    const flags = new daff.CompareFlags();
    flags.addPrimaryKey('id');
    const alignment = daff.compareTables(t1, t2, flags).align();
    const out = new daff.TableView([]);
    new daff.TableDiff(alignment, flags).hilite(out);
    return out;
  };
  // warm: the same work done once before on the small pair, as the service's warm side
  if (warmUp) {
    const w = JSON.parse(warmUp) as { baseFile: string; targetFile: string };
    await diff(w.baseFile, w.targetFile);
  }
  const startRssMb = process.memoryUsage().rss / MB;
  const started = performance.now();
  const out = await diff(baseFile, targetFile);
  const ms = performance.now() - started;
  process.stdout.write(
    JSON.stringify({
      ms,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
      startRssMb,
      diffRows: out.get_height(),
    }),
  );
}

async function childService(input: string): Promise<void> {
  const p = JSON.parse(input) as { companyId: string; comparisonId: string; warmUpComparisonId?: string };
  const { loadConfig } = require('../common/config') as typeof import('../common/config');
  const { createStorage } = require('../common/storage') as typeof import('../common/storage');
  const { createKnex } = require('../db/knex') as typeof import('../db/knex');
  const { actingStatement } = require('../db/unitOfWork') as typeof import('../db/unitOfWork');
  const { runComparison } =
    require('../domain/comparisons/run') as typeof import('../domain/comparisons/run');
  // bench/lib.ts asWorker, without loading bench/lib.ts
  const asWorker = <T>(companyId: string, fn: () => PromiseLike<T>): Promise<T> =>
    actingStatement({ companyId }, fn);
  const config = loadConfig();
  // as the worker: the application role, acting for the company (bench/lib.ts asWorker)
  const knex = createKnex(config.databaseUrl, 4, { actAs: config.databaseAppRole });
  const storage = createStorage(config);
  try {
    // as in a running worker: the database pool's connections open (the comparison writes its changes on
    // up to three at once) and DuckDB's library loaded — a worker pays these once, not per comparison; the
    // comparison's own DuckDB database is still created inside the measured run
    await Promise.all([1, 2, 3].map(() => knex.transaction(async (trx) => trx.raw('select 1'))));
    const { DuckDBInstance } = require('@duckdb/node-api') as typeof import('@duckdb/node-api');
    (await DuckDBInstance.create(':memory:')).closeSync();
    // warm: one comparison of the small pair run before in this process, as by a worker that has compared
    // before (its code compiled by V8's JIT); cold: the first comparison of a fresh process
    if (p.warmUpComparisonId) {
      const w = await asWorker(p.companyId, () =>
        runComparison(
          { knex, storage, config },
          { companyId: p.companyId, comparisonId: p.warmUpComparisonId! },
        ),
      );
      if (w.status !== 'ready') throw new Error(`warm-up comparison ${w.status}`);
    }
    const startRssMb = process.memoryUsage().rss / MB;
    const started = performance.now();
    const outcome: RunOutcome = await asWorker(p.companyId, () =>
      runComparison({ knex, storage, config }, { companyId: p.companyId, comparisonId: p.comparisonId }),
    );
    const ms = performance.now() - started;
    const row = (await asWorker(p.companyId, () =>
      knex('comparisons').where({ id: p.comparisonId }).first(),
    )) as { result: unknown };
    process.stdout.write(
      JSON.stringify({
        ms,
        maxRssMb: process.resourceUsage().maxRSS / 1024,
        startRssMb,
        status: outcome.status,
        result: row.result,
      }),
    );
  } finally {
    await knex.destroy();
  }
}

async function child(kind: string, args: string[], env: NodeJS.ProcessEnv) {
  const { stdout, stderr } = await run(process.execPath, [__filename, '--child', kind, ...args], {
    env,
    maxBuffer: 64 * MB,
  });
  if (stderr) process.stderr.write(stderr);
  return JSON.parse(stdout) as { ms: number; maxRssMb: number; startRssMb: number; [k: string]: unknown };
}

// ---- main ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const { arg, asWorker, median, seedComparisonRow, seedCompany, seedVersions, startBenchRun } =
    require('./lib') as typeof import('./lib');
  const { runBuild } = require('../domain/reports/build') as typeof import('../domain/reports/build');
  const runs = arg('runs', 1);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'compare-bench-'));
  const benchRun = await startBenchRun({ REPORT_WORK_DIR: path.join(tmp, 'work') });
  const { config, env, storage, knex, appKnex } = benchRun;
  try {
    const owner = await seedCompany(knex);
    const { companyId } = owner;
    // the small pair the warm measurements compare first in their process (both sides), its reports ready
    const warmPair = await writePair(tmp, 'warmup', 5_000);
    const warmSizes = [(await stat(warmPair.baseFile)).size, (await stat(warmPair.targetFile)).size];
    const warm = await seedVersions(
      benchRun,
      owner,
      'csv',
      [warmPair.baseFile, warmPair.targetFile],
      warmSizes,
    );
    for (const [vi, vid] of warm.versionIds.entries()) {
      await knex('reports').insert({
        id: randomUUID(),
        companyId,
        fileId: warm.fileId,
        fileVersionId: vid,
        version: vi + 1,
        status: 'queued',
        build: 1,
      });
      await asWorker(companyId, () =>
        runBuild(
          { knex: appKnex, storage, config },
          { companyId, fileId: warm.fileId, fileVersionId: vid, version: vi + 1, build: 1 },
        ),
      );
    }
    const comparisonRow = (fileId: string, versionIds: string[]) =>
      seedComparisonRow(knex, companyId, fileId, versionIds, ['id']);
    const only = args.includes('--case') ? args[args.indexOf('--case') + 1] : undefined;
    const cases = [
      { id: '100k', name: '100k×12', rows: 100_000 },
      { id: '25mb', name: '25 MB', rows: rowsFor(25 * MB - 256 * 1024) },
    ].filter((c) => only === undefined || c.id === only);
    if (cases.length === 0) throw new Error(`--case: 100k or 25mb, not ${only}`);
    for (const c of cases) {
      const pair = await writePair(tmp, c.name.replace(/\W/g, ''), c.rows);
      const sizes = [(await stat(pair.baseFile)).size, (await stat(pair.targetFile)).size];
      console.log(
        `[bench] ${c.name}: base ${(sizes[0] / MB).toFixed(1)} MB, target ${(sizes[1] / MB).toFixed(1)} MB, ${c.rows} rows; expected ${JSON.stringify(pair.expected)}`,
      );
      // the file and its two versions, as uploads leave them
      const { fileId, versionIds } = await seedVersions(
        benchRun,
        owner,
        'csv',
        [pair.baseFile, pair.targetFile],
        sizes,
      );
      const measure = async (into: Side, warmUp = false) => {
        const comparisonId = await comparisonRow(fileId, versionIds);
        const warmUpComparisonId = warmUp ? await comparisonRow(warm.fileId, warm.versionIds) : undefined;
        const s = await child(
          'service',
          [JSON.stringify({ companyId, comparisonId, warmUpComparisonId })],
          env,
        );
        if (s.status !== 'ready') throw new Error(`comparison ${String(s.status)}`);
        into.ms.push(s.ms);
        into.rss.push(s.maxRssMb);
        into.growth.push(s.maxRssMb - s.startRssMb);
        return s.result as any;
      };
      const side = (): Side => ({ ms: [], rss: [], growth: [] });
      const fallback = side();
      const service = side();
      const serviceWarm = side();
      const daffCold = side();
      const daffWarm = side();
      // (1) no ready report (a report stuck or failed, after COMPARISON_REPORT_WAIT_SECONDS): the comparison
      // classifies every cell itself
      let fallbackResult: any;
      for (let n = 0; n < runs; n++) fallbackResult = await measure(fallback);
      // (2) the service's path: the workflow waits for both versions' reports (built at upload) and the
      // comparison takes their types. The two builds, as the worker runs them; the target's is the
      // "one report build" printed below
      let reportMs = 0;
      for (const [vi, vid] of versionIds.entries()) {
        await knex('reports').insert({
          id: randomUUID(),
          companyId,
          fileId,
          fileVersionId: vid,
          version: vi + 1,
          status: 'queued',
          build: 1,
        });
        const rs = performance.now();
        await asWorker(companyId, () =>
          runBuild(
            { knex: appKnex, storage, config },
            { companyId, fileId, fileVersionId: vid, version: vi + 1, build: 1 },
          ),
        );
        reportMs = performance.now() - rs;
      }
      let result: any;
      const daff = async (into: Side, warmUp = false) => {
        const d = await child(
          'daff',
          [pair.baseFile, pair.targetFile, ...(warmUp ? [JSON.stringify(warmPair)] : [])],
          env,
        );
        into.ms.push(d.ms);
        into.rss.push(d.maxRssMb);
        into.growth.push(d.maxRssMb - d.startRssMb);
      };
      // cold and warm alternate, service and daff alternate
      for (let n = 0; n < runs; n++) {
        result = await measure(service);
        await daff(daffCold);
        const warmResult = await measure(serviceWarm, true);
        await daff(daffWarm, true);
        for (const k of ['added', 'removed', 'changed', 'unchanged'])
          if (warmResult[k] !== result[k]) throw new Error(`warm result differs: ${k}`);
      }
      const counts = {
        added: result.added,
        removed: result.removed,
        changed: result.changed,
        unchanged: result.unchanged,
      };
      console.log(`  result: ${JSON.stringify(counts)}`);
      const ok =
        counts.added === pair.expected.added &&
        counts.removed === pair.expected.removed &&
        counts.changed === pair.expected.changed &&
        ['added', 'removed', 'changed', 'unchanged'].every(
          (k) => fallbackResult[k] === counts[k as keyof typeof counts],
        );
      console.log(`  counts as generated: ${ok ? 'yes' : 'NO'}`);
      const line = (label: string, x: Side, against: Side, what: string) => {
        const ms = median(x.ms);
        const rss = median(x.rss);
        const growth = median(x.growth);
        console.log(
          `  ${label}: ${(ms / 1000).toFixed(2)} s, peak RSS ${rss.toFixed(0)} MB — ${(median(against.ms) / ms).toFixed(1)}× ${what}'s speed (target ≥ 5×), memory ${(rss / median(against.rss)).toFixed(2)} of ${what}'s (target ≤ 0.5); peak above the process's RSS when the comparison starts ${growth.toFixed(0)} MB, ${(growth / median(against.growth)).toFixed(2)} of ${what}'s`,
        );
      };
      for (const [label, d] of [
        ['cold', daffCold],
        ['warm', daffWarm],
      ] as const)
        console.log(
          `  daff 1.4.2, ${label}: ${(median(d.ms) / 1000).toFixed(2)} s, peak RSS ${median(d.rss).toFixed(0)} MB, ${median(d.growth).toFixed(0)} MB above its RSS at the start (csv-parse + compareTables + TableDiff, key id)`,
        );
      line('service, reports ready, cold (first in its process)', service, daffCold, 'cold daff');
      line('service, reports ready, warm (as a running worker)  ', serviceWarm, daffWarm, 'warm daff');
      line('service, no ready report, cold (fallback)           ', fallback, daffCold, 'cold daff');
      console.log(
        `  comparison vs one report build of the target: ${(median(service.ms) / reportMs).toFixed(2)}× (report ${(reportMs / 1000).toFixed(2)} s)`,
      );
    }
  } finally {
    await benchRun.close();
    await rm(tmp, { recursive: true, force: true });
  }
}

/** bench/lib.ts runMain, without loading bench/lib.ts */
function runMain(fn: () => Promise<void>): void {
  fn().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

if (args[0] === '--child') {
  const [, kind, a, b, c] = args;
  runMain(() => (kind === 'daff' ? childDaff(a, b, c) : childService(a)));
} else {
  runMain(main);
}
