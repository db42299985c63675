/**
 * Quality rules and sensitive-data detection benchmark (issue 13): the report pass over a 25 MB CSV (about
 * 270k rows × 12 mixed columns) with 20 rules and detection on, against the profile-only pass of the same
 * file, in the same run, alternating (median of `--runs`). Target: at most 1.3×.
 *
 *   node dist/bench/quality.js [--runs 3] [--mb 25]
 *
 * Runs the engine in this process (the same code the worker's activity runs: load → profile → steps) on a
 * local file, so the figure is the analysis itself, not Temporal, MinIO or PostgreSQL (bench/report.ts
 * measures the same row for whole builds, rules read from the database under row-level security).
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { rulesStep, type BuildRule } from '../domain/rules/evaluate';
import { sensitiveStep } from '../domain/sensitive/step';
import { fileSource, openEngine, runAnalysis, type AnalysisStep } from '../domain/reports/engine';
import { arg, median, MB, runMain, writeLines } from './lib';

const HEADER = 'id,email,phone,amount,quantity,status,created,country,code,score,note,ip';
const STATUSES = ['active', 'paused', 'closed', 'pending'];
const COUNTRIES = ['DE', 'FR', 'US', 'GB', 'NL', 'ES', 'IT', 'PL'];

/** Chunks of a CSV of about `bytes` bytes with 12 mixed columns, 1000 rows each after the header. */
function* mixedCsv(bytes: number): Generator<string> {
  let written = 0;
  let i = 0;
  yield `${HEADER}\n`;
  while (written < bytes) {
    const lines: string[] = [];
    for (let k = 0; k < 1000; k++, i++) {
      const day = String((i % 28) + 1).padStart(2, '0');
      lines.push(
        [
          i + 1,
          i % 50 === 0 ? '' : `user${i}@example.com`,
          `+1 415-${200 + (i % 700)}-${String(i % 10000).padStart(4, '0')}`,
          ((i * 37) % 100000) / 100,
          i % 500,
          STATUSES[i % 4],
          `2024-${String((i % 12) + 1).padStart(2, '0')}-${day}`,
          COUNTRIES[i % 8],
          `AB-${i % 9999}`,
          (i % 1000) / 10,
          i % 7 === 0 ? 'call back later' : `note number ${i % 3000}`,
          `10.${i % 256}.${(i >> 8) % 256}.${(i % 250) + 1}`,
        ].join(','),
      );
    }
    const chunk = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(chunk);
    yield chunk;
  }
}

/** Twenty rules of every kind over the bench file's columns. */
function benchRules(): BuildRule[] {
  const r = (kind: BuildRule['kind'], column: string | null, params: Record<string, unknown> = {}) => ({
    kind,
    column,
    params,
  });
  const specs = [
    r('not_null', 'email'),
    r('not_null', 'id'),
    r('unique', 'id'),
    r('unique', 'email'),
    r('range', 'amount', { min: 0, max: 900 }),
    r('range', 'quantity', { min: 1, max: 499 }),
    r('range', 'score', { min: 0, max: 100 }),
    r('length', 'code', { min: 4, max: 7 }),
    r('length', 'note', { max: 20 }),
    r('pattern', 'email', { regex: '[a-z0-9.]+@[a-z0-9.-]+\\.[a-z]{2,}' }),
    r('pattern', 'code', { regex: '[A-Z]{2}-\\d{1,4}' }),
    r('pattern', 'phone', { regex: '\\+\\d{1,3} \\d{3}-\\d{3}-\\d{4}' }),
    r('allowed_values', 'status', { values: ['active', 'paused', 'closed'] }),
    r('allowed_values', 'country', { values: ['DE', 'FR', 'US', 'GB', 'NL', 'ES', 'IT'] }),
    r('type', 'created', { type: 'date' }),
    r('type', 'amount', { type: 'decimal' }),
    r('type', 'quantity', { type: 'integer' }),
    r('not_null', 'ip'),
    r('row_count', null, { min: 1000, max: 10_000_000 }),
    r('unique', 'code'),
  ];
  return specs.map((s, i) => ({
    id: `bench-${i}`,
    name: `rule ${i}`,
    severity: 'error',
    tolerance: '0.01',
    ...s,
  }));
}

async function timeOnce(file: string, bytes: number, steps: AnalysisStep[], dir: string): Promise<number> {
  const engine = await openEngine({
    threads: Number(process.env.REPORT_THREADS ?? 2),
    memoryLimitMb: Number(process.env.REPORT_MEMORY_LIMIT_MB ?? 512),
    tempDirectory: path.join(dir, 'spill'),
  });
  try {
    const started = process.hrtime.bigint();
    await runAnalysis(
      engine.conn,
      fileSource(file, { format: 'csv', delimiter: ',', sizeBytes: bytes }),
      steps,
      { companyId: 'bench', fileId: 'bench', fileVersionId: 'bench', version: 1, extra: {} },
      { maxColumns: 1000, xlsxLimits: null, maxRows: 2_000_000, workDir: dir },
    );
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    engine.close();
  }
}

interface QualityOverhead {
  profileOnlyMs: number;
  withRulesAndDetectionMs: number;
  ratio: number;
}

/** The report pass with 20 rules and detection against the profile-only pass, alternating, medians. */
async function measureQualityOverhead(file: string, runs: number, workDir: string): Promise<QualityOverhead> {
  const bytes = (await stat(file)).size;
  const plain: number[] = [];
  const full: number[] = [];
  for (let i = 0; i < runs; i++) {
    plain.push(await timeOnce(file, bytes, [], workDir));
    full.push(await timeOnce(file, bytes, [rulesStep(benchRules()), sensitiveStep()], workDir));
  }
  const profileOnlyMs = median(plain);
  const withRulesAndDetectionMs = median(full);
  return { profileOnlyMs, withRulesAndDetectionMs, ratio: withRulesAndDetectionMs / profileOnlyMs };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'quality-bench-'));
  try {
    const file = path.join(dir, 'quality-bench.csv');
    await writeLines(file, mixedCsv(arg('mb', 25) * MB - 64 * 1024));
    const size = (await stat(file)).size;
    const r = await measureQualityOverhead(file, arg('runs', 3), dir);
    console.log(`CSV ${(size / MB).toFixed(1)} MB, 12 columns`);
    console.log(`profile only                 ${r.profileOnlyMs.toFixed(0).padStart(7)} ms (median)`);
    console.log(
      `20 rules + detection         ${r.withRulesAndDetectionMs.toFixed(0).padStart(7)} ms (median)`,
    );
    console.log(`ratio ${r.ratio.toFixed(2)}× (target ≤ 1.30×) ${r.ratio <= 1.3 ? 'OK' : 'MISSED'}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

runMain(main);
