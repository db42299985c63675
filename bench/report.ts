/**
 * Report benchmark: the report build of a 25 MB CSV (~270k rows × 12 mixed columns) and a 25 MB XLSX,
 * activity start to report saved (domain/reports/build.ts runBuild, against the local PostgreSQL and
 * MinIO), against in the same run:
 *   (a) a bare streaming parse of the same file that does nothing with the rows (csv-parse; ExcelJS
 *       WorkbookReader), and
 *   (b) pandas read_csv + describe(include='all') + nunique() + isna().sum() on the CSV (pandas installed
 *       from PyPI into .local/bench-venv; skipped with a message when that is not possible).
 * And (issue 13) the CSV report with 20 quality rules and sensitive-data detection against the profile-only
 * build, alternating in the same run (target ≤ 1.3×).
 * The bare passes run in child processes of their own (timed inside, around the parse alone), so this
 * process's RSS growth during the builds is the builds' alone: it plays the worker. Also upload commit →
 * report.ready received by a local webhook receiver (p50) for the CSV, through the API, Temporal and the
 * outbox.
 *
 *   node dist/bench/report.js [--runs 3] [--mb 25]
 *
 * Targets (2-core machine): CSV report ≤ 0.5× csv-parse and ≥ 2.5× faster than pandas; XLSX report
 * ≤ 1.2× the bare ExcelJS read; RSS growth < 256 MB.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { NativeConnection, bundleWorkflowCode } from '@temporalio/worker';
import { parse } from 'csv-parse';
import ExcelJS from 'exceljs';
import { createApp } from '../api/app';
import { createLogger } from '../common/logger';
import { createMailer } from '../common/mailer';
import { createTemporalClient } from '../common/temporal';
import { generateWebhookSecret, webhookSecretBox } from '../domain/webhooks/secret';
import { runBuild, type BuildExtension } from '../domain/reports/build';
import type { BuildRule } from '../domain/rules/evaluate';
import { qualityExtension } from '../domain/rules/extension';
import { sensitiveExtension } from '../domain/sensitive/extension';
import { installTemporalRuntime } from '../worker/runtime';
import { createWorker, ensureOutboxDispatcher } from '../worker/worker';
import {
  arg,
  asWorker,
  MB,
  median,
  runMain,
  sampleRss,
  seedCompany,
  seedUploadKey,
  seedVersions,
  startBenchRun,
  type BenchRun,
} from './lib';

const run = promisify(execFile);
const RUNS = arg('runs', 3);
const TARGET_BYTES = arg('mb', 25) * 1024 * 1024 - 64 * 1024;
const ROOT = path.resolve(__dirname, '../..');

const CITIES = ['Lyon', 'Nice', 'Paris', 'Lille', 'Nantes', 'Brest', 'Metz', 'Caen'];
const STATUSES = ['open', 'closed', 'pending'];

/** One row of 12 mixed columns: integers, decimals, dates, datetimes, booleans, text, nulls. */
function row(i: number): Array<string | number | boolean | Date | null> {
  const day = new Date(Date.UTC(2020, 0, 1) + ((i * 7919) % 1500) * 86_400_000);
  return [
    i,
    `c-${(i * 7919) % 100_000}`,
    CITIES[i % CITIES.length],
    Math.round(((i * 13.37) % 9999) * 100) / 100 - 500,
    (i * 31) % 500,
    i % 17 === 0 ? null : Math.round(((i % 97) / 97) * 1000) / 1000,
    day,
    new Date(day.getTime() + (i % 86_400) * 1000),
    i % 3 === 0,
    STATUSES[i % 3],
    `n, ${i % 100}`,
    `C${String((i * 104_729) % 1_000_000).padStart(6, '0')}`,
  ];
}
const HEADER = [
  'id',
  'name',
  'city',
  'amount',
  'qty',
  'ratio',
  'day',
  'at',
  'flag',
  'status',
  'note',
  'code',
];

/** Twenty rules of every kind over this file's columns (issue 13). */
function benchRules(): Array<Omit<BuildRule, 'id' | 'name'>> {
  const r = (kind: BuildRule['kind'], column: string | null, params: Record<string, unknown> = {}) => ({
    kind,
    column,
    params,
    severity: 'error' as const,
    tolerance: '0.01',
  });
  return [
    r('not_null', 'ratio'),
    r('not_null', 'name'),
    r('unique', 'id'),
    r('unique', 'code'),
    r('unique', 'name'),
    r('range', 'amount', { min: -500, max: 9000 }),
    r('range', 'qty', { min: 1, max: 499 }),
    r('range', 'ratio', { min: 0, max: 1 }),
    r('length', 'code', { min: 7, max: 7 }),
    r('length', 'note', { max: 5 }),
    r('pattern', 'code', { regex: 'C\\d{6}' }),
    r('pattern', 'name', { regex: 'c-\\d+' }),
    r('pattern', 'note', { regex: 'n, \\d{1,2}' }),
    r('allowed_values', 'status', { values: ['open', 'closed'] }),
    r('allowed_values', 'city', { values: ['Lyon', 'Nice', 'Paris', 'Lille', 'Nantes', 'Brest', 'Metz'] }),
    r('type', 'day', { type: 'date' }),
    r('type', 'at', { type: 'datetime' }),
    r('type', 'flag', { type: 'boolean' }),
    r('not_null', 'at'),
    r('row_count', null, { min: 1000, max: 10_000_000 }),
  ];
}

function csvCell(v: string | number | boolean | Date | null): string {
  if (v === null) return '';
  if (v instanceof Date) {
    const iso = v.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19);
  }
  const text = String(v);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

async function writeCsv(file: string, bytes: number): Promise<number> {
  const out = createWriteStream(file);
  let written = 0;
  const header = HEADER.join(',') + '\n';
  out.write(header);
  written += header.length;
  let rows = 0;
  for (let i = 0; ; i++) {
    const line = row(i).map(csvCell).join(',') + '\n';
    if (written + line.length > bytes) break;
    written += line.length;
    rows++;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  return rows;
}

async function writeXlsx(file: string, rows: number): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: file,
    useSharedStrings: false,
    useStyles: true,
  });
  const sheet = workbook.addWorksheet('Data');
  sheet.addRow(HEADER).commit();
  sheet.getColumn(7).numFmt = 'yyyy-mm-dd';
  sheet.getColumn(8).numFmt = 'yyyy-mm-dd hh:mm:ss';
  for (let i = 0; i < rows; i++) sheet.addRow(row(i)).commit();
  sheet.commit();
  await workbook.commit();
}

async function writeXlsxOfSize(dir: string, bytes: number): Promise<{ file: string; rows: number }> {
  const probe = path.join(dir, 'probe.xlsx');
  await writeXlsx(probe, 20_000);
  const perRow = (await stat(probe)).size / 20_000;
  const rows = Math.floor((bytes * 0.98) / perRow);
  const file = path.join(dir, 'bench.xlsx');
  await writeXlsx(file, rows);
  return { file, rows };
}

async function bareCsv(file: string): Promise<number> {
  const started = performance.now();
  let n = 0;
  const parser = createReadStream(file, { highWaterMark: MB }).pipe(
    parse({ bom: true, relax_column_count: true }),
  );
  for await (const _record of parser) n++;
  if (n === 0) throw new Error('no rows');
  return performance.now() - started;
}

async function bareXlsx(file: string): Promise<number> {
  const started = performance.now();
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(createReadStream(file), {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'cache',
    entries: 'ignore',
  });
  let n = 0;
  for await (const worksheet of reader) for await (const _row of worksheet) n++;
  if (n === 0) throw new Error('no rows');
  return performance.now() - started;
}

/** pandas in a bench-local virtual environment; null (with the reason printed) when it cannot be had. */
async function pandasPython(): Promise<string | null> {
  const venv = path.join(ROOT, '.local', 'bench-venv');
  const python = path.join(venv, 'bin', 'python');
  try {
    if (!existsSync(python)) await run('python3', ['-m', 'venv', venv]);
    await run(python, ['-c', 'import pandas']).catch(async () => {
      console.log('[bench] installing pandas from PyPI into .local/bench-venv');
      await run(python, ['-m', 'pip', 'install', '--quiet', 'pandas'], { timeout: 600_000 });
    });
    await run(python, ['-c', 'import pandas']);
    return python;
  } catch (err) {
    console.log(`[bench] pandas not available, comparison skipped: ${(err as Error).message.split('\n')[0]}`);
    return null;
  }
}

async function pandasRun(python: string, file: string, dir: string): Promise<number> {
  const script = path.join(dir, 'pandas_profile.py');
  await writeFile(
    script,
    [
      'import sys, time',
      'import pandas as pd',
      't = time.perf_counter()',
      'df = pd.read_csv(sys.argv[1])',
      "d = df.describe(include='all')",
      'u = df.nunique()',
      'n = df.isna().sum()',
      'print((time.perf_counter() - t) * 1000)',
    ].join('\n'),
  );
  const { stdout } = await run(python, [script, file], { maxBuffer: 1 << 20 });
  return Number(stdout.trim());
}

/**
 * A bare pass in a child process of its own (`--bare csv|xlsx <file>`: it prints the pass's milliseconds, timed
 * inside the child around the parse alone), so that its memory is not counted in this process's RSS, which
 * plays the worker's.
 */
async function bareInChild(kind: 'csv' | 'xlsx', file: string): Promise<number> {
  const { stdout } = await run(process.execPath, [__filename, '--bare', kind, file], {
    maxBuffer: 1024 * 1024,
    timeout: 300_000,
  });
  const ms = Number(stdout.trim().split('\n').pop());
  if (!Number.isFinite(ms)) throw new Error(`bare ${kind} pass: no time in ${JSON.stringify(stdout)}`);
  return ms;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--bare') {
    const [kind, file] = process.argv.slice(3);
    console.log(String(kind === 'xlsx' ? await bareXlsx(file) : await bareCsv(file)));
    return;
  }
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'report-bench-'));
  const benchRun = await startBenchRun({
    REPORT_WORK_DIR: path.join(tmp, 'work'),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ALLOW_HTTP: 'true',
  });
  const { config, storage, knex, appKnex } = benchRun;
  installTemporalRuntime(createLogger(config.logLevel, 'bench'));
  const cleanup: Array<() => Promise<unknown>> = [];
  try {
    console.log(`[bench] generating a ${(TARGET_BYTES / MB).toFixed(1)} MB CSV and XLSX in ${tmp}`);
    const csvFile = path.join(tmp, 'bench.csv');
    const csvRows = await writeCsv(csvFile, TARGET_BYTES);
    const { file: xlsxFile, rows: xlsxRows } = await writeXlsxOfSize(tmp, TARGET_BYTES);
    const csvSize = (await stat(csvFile)).size;
    const xlsxSize = (await stat(xlsxFile)).size;
    console.log(
      `[bench] CSV ${(csvSize / MB).toFixed(2)} MB, ${csvRows} rows × 12; XLSX ${(xlsxSize / MB).toFixed(2)} MB, ${xlsxRows} rows × 12`,
    );

    const owner = await seedCompany(knex);
    const { companyId } = owner;

    /** a file, its version (the object in MinIO) and a report row, as an upload leaves them */
    const stored = async (file: string, format: 'csv' | 'xlsx', size: number) => {
      const {
        fileId,
        versionIds: [versionId],
      } = await seedVersions(benchRun, owner, format, [file], [size]);
      const reportId = randomUUID();
      await knex('reports').insert({
        id: reportId,
        companyId,
        fileId,
        fileVersionId: versionId,
        version: 1,
        status: 'queued',
        build: 1,
      });
      return { fileId, versionId, reportId };
    };

    const baselineRss = process.memoryUsage().rss;
    const rss = sampleRss(() => process.memoryUsage().rss);
    /** one build as the worker's activity runs it: the application role, acting for the company */
    const build = async (
      target: { fileId: string; versionId: string; reportId: string },
      n: number,
      extensions: BuildExtension[] = [],
    ) => {
      await knex('reports').where({ id: target.reportId }).update({ status: 'queued', build: n });
      const started = performance.now();
      const outcome = await asWorker(companyId, () =>
        runBuild(
          { knex: appKnex, storage, config, extensions },
          { companyId, fileId: target.fileId, fileVersionId: target.versionId, version: 1, build: n },
        ),
      );
      const ms = performance.now() - started;
      if (outcome.status !== 'ready') throw new Error(`build ${outcome.status}`);
      return ms;
    };

    const results: Record<string, { report: number[]; bare: number[]; quality: number[] }> = {
      csv: { report: [], bare: [], quality: [] },
      xlsx: { report: [], bare: [], quality: [] },
    };
    // issue 13: the company's 20 quality rules, read by the quality extension when a build starts
    await knex('rules').insert(
      benchRules().map((r, i) => ({
        id: randomUUID(),
        companyId,
        name: `bench rule ${i}`,
        kind: r.kind,
        columnName: r.column,
        params: JSON.stringify(r.params),
        severity: r.severity,
        tolerance: r.tolerance,
      })),
    );
    const withQuality = () => [qualityExtension(), sensitiveExtension()];
    const csvTarget = await stored(csvFile, 'csv', csvSize);
    const xlsxTarget = await stored(xlsxFile, 'xlsx', xlsxSize);
    // warm-up (DuckDB loaded, connections open), not counted
    await build(csvTarget, 100);
    for (let i = 0; i < RUNS; i++) {
      results.csv.bare.push(await bareInChild('csv', csvFile));
      results.csv.report.push(await build(csvTarget, 101 + i));
      results.csv.quality.push(await build(csvTarget, 151 + i, withQuality()));
    }
    for (let i = 0; i < RUNS; i++) {
      results.xlsx.bare.push(await bareInChild('xlsx', xlsxFile));
      results.xlsx.report.push(await build(xlsxTarget, 201 + i));
    }
    const rssGrowth = ((await rss.stop()) - baselineRss) / MB;

    const python = await pandasPython();
    const pandas: number[] = [];
    if (python) for (let i = 0; i < RUNS; i++) pandas.push(await pandasRun(python, csvFile, tmp));

    // upload commit → report.ready received, through the API, the worker, the outbox and a webhook
    const latencies = await endToEnd(benchRun, owner, csvFile, cleanup);

    const all = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    console.log(
      `[bench] runs (ms): CSV report ${all(results.csv.report)}; bare ${all(results.csv.bare)}; with rules ${all(results.csv.quality)}; XLSX report ${all(results.xlsx.report)}; bare ${all(results.xlsx.bare)}`,
    );
    const csvReport = median(results.csv.report);
    const csvBare = median(results.csv.bare);
    const xlsxReport = median(results.xlsx.report);
    const xlsxBare = median(results.xlsx.bare);
    console.log('');
    console.log(`report benchmark (median of ${RUNS} runs; ${os.cpus().length} cores)`);
    console.log(
      `  CSV  report build ${csvReport.toFixed(0)} ms vs bare csv-parse ${csvBare.toFixed(0)} ms: ratio ${(csvReport / csvBare).toFixed(2)} (target ≤ 0.50)`,
    );
    if (pandas.length > 0) {
      const p = median(pandas);
      console.log(
        `  CSV  pandas read_csv+describe+nunique+isna ${p.toFixed(0)} ms: the report is ${(p / csvReport).toFixed(2)}× faster (target ≥ 2.5×)`,
      );
    } else {
      console.log('  CSV  pandas: skipped (not available)');
    }
    console.log(
      `  XLSX report build ${xlsxReport.toFixed(0)} ms vs bare ExcelJS WorkbookReader ${xlsxBare.toFixed(0)} ms: ratio ${(xlsxReport / xlsxBare).toFixed(2)} (target ≤ 1.20)`,
    );
    const csvQuality = median(results.csv.quality);
    console.log(
      `  CSV  report with 20 rules + sensitive-data detection ${csvQuality.toFixed(0)} ms vs profile only ${csvReport.toFixed(0)} ms: ratio ${(csvQuality / csvReport).toFixed(2)} (target ≤ 1.30)`,
    );
    console.log(`  worker RSS growth during the builds: ${rssGrowth.toFixed(1)} MB (target < 256 MB)`);
    console.log(
      `  upload commit → report.ready received (CSV, ${latencies.length} uploads): p50 ${median(latencies).toFixed(0)} ms`,
    );
  } finally {
    for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
    await benchRun.close();
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The API and a worker in this process, both on the application role's connection, as served. */
async function endToEnd(
  benchRun: BenchRun,
  owner: { companyId: string; personId: string },
  csvFile: string,
  cleanup: Array<() => Promise<unknown>>,
): Promise<number[]> {
  const { config, storage, knex, appKnex } = benchRun;
  const logger = createLogger(config.logLevel, 'bench');
  const temporal = createTemporalClient(config);
  cleanup.push(() => temporal.connection.close());
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    logger: quiet,
  });
  const worker = await createWorker({ config, knex: appKnex, logger, connection, workflowBundle });
  const running = worker.run();
  cleanup.push(async () => {
    worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
  });
  const dispatcherId = await ensureOutboxDispatcher(temporal, config);
  cleanup.push(() => temporal.workflow.getHandle(dispatcherId).terminate('bench done'));

  const received = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: { fileId: string } };
      if (body.type === 'report.ready' && !received.has(body.data.fileId))
        received.set(body.data.fileId, now);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const endpointId = randomUUID();
  await knex('webhookEndpoints').insert({
    id: endpointId,
    companyId: owner.companyId,
    name: 'bench',
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    events: ['report.ready'],
    secretEncrypted: webhookSecretBox(config.secretKey).seal(endpointId, generateWebhookSecret()),
  });
  const key = await seedUploadKey(knex, config, owner);
  const api = http.createServer(
    createApp({
      config,
      logger,
      knex: appKnex,
      temporal,
      storage,
      mailer: createMailer(config, logger),
    }).callback(),
  );
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise<void>((resolve) => api.close(() => resolve())));
  const baseUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const data = await readFile(csvFile);
  const latencies: number[] = [];
  for (let i = 0; i < 3; i++) {
    const form = new FormData();
    form.append('file', new Blob([data]), 'bench.csv');
    const res = await fetch(`${baseUrl}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const committed = performance.now();
    const body = (await res.json()) as { id: string };
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${JSON.stringify(body)}`);
    const deadline = Date.now() + 180_000;
    while (!received.has(body.id)) {
      if (Date.now() > deadline) throw new Error('report.ready not received');
      await new Promise((r) => setTimeout(r, 10));
    }
    latencies.push(received.get(body.id)! - committed);
  }
  return latencies;
}

runMain(main);
