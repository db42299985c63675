/**
 * Upload benchmark: a 24 MB CSV and a 24 MB XLSX uploaded through the API (multipart over loopback)
 * against `putObject` of the same bytes straight to MinIO, in one run.
 *
 *   node dist/bench/upload.js [--runs 5] [--mb 24]
 *
 * Prints, per format: median time and throughput of both paths, the ratio (target ≥ 0.70), and the API
 * process's peak memory growth over its idle baseline (target < 64 MB). The API runs as a child process
 * (node dist/api/server.js) so its memory is measured alone (/proc/<pid>/status, sampled every 10 ms,
 * and VmHWM). Uses the local services; creates and drops its own database, S3 prefix and task queue.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import http from 'node:http';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { createTemporalClient } from '../common/temporal';
import { arg, MB, median, runMain, sampleRss, seedCompany, seedUploadKey, startBenchRun } from './lib';

const RUNS = arg('runs', 5);
const TARGET_BYTES = arg('mb', 24) * 1024 * 1024;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function writeCsv(file: string, bytes: number): Promise<void> {
  const out = createWriteStream(file);
  let written = 0;
  const header = 'id,name,city,amount,ratio,created_at,status\n';
  out.write(header);
  written += header.length;
  const cities = ['Lyon', 'Nice', 'Paris', 'Lille', 'Nantes', 'Brest'];
  for (let i = 0; written < bytes - 200; i++) {
    const line = `${i},customer-${(i * 7919) % 100000},${cities[i % 6]},${(i * 13.37) % 9999},${(i % 97) / 97},2026-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')},${i % 3 ? 'open' : 'closed'}\n`;
    written += line.length;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
}

async function writeXlsx(file: string, rows: number): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: false });
  const sheet = workbook.addWorksheet('Data');
  sheet.addRow(['id', 'name', 'city', 'amount', 'ratio', 'code']).commit();
  const cities = ['Lyon', 'Nice', 'Paris', 'Lille', 'Nantes', 'Brest'];
  for (let i = 0; i < rows; i++) {
    sheet
      .addRow([
        i,
        `customer-${(i * 7919) % 100000}`,
        cities[i % 6],
        (i * 13.37) % 9999,
        (i % 97) / 97,
        randomBytes(4).toString('hex'),
      ])
      .commit();
  }
  sheet.commit();
  await workbook.commit();
}

/** An XLSX of about `bytes`: calibrate bytes per row on a small file, then write the real one. */
async function writeXlsxOfSize(dir: string, bytes: number): Promise<string> {
  const probe = path.join(dir, 'probe.xlsx');
  await writeXlsx(probe, 20_000);
  const perRow = (await stat(probe)).size / 20_000;
  const file = path.join(dir, 'bench.xlsx');
  await writeXlsx(file, Math.floor((bytes * 0.985) / perRow));
  return file;
}

function multipart(data: Buffer, name: string): { body: Buffer; contentType: string } {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    body: Buffer.concat([head, data, tail]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

function readStatus(pid: number): Promise<{ rss: number; hwm: number }> {
  return readFile(`/proc/${pid}/status`, 'utf8').then((text) => {
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  });
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'upload-bench-'));
  const port = await freePort();
  // the API runs as a child process (node dist/api/server.js) on this run's environment
  const benchRun = await startBenchRun({
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.BENCH_API_LOG_LEVEL ?? 'warn',
    PORT: String(port),
    HOST: '127.0.0.1',
  });
  const { config, env, storage, knex } = benchRun;
  const temporal = createTemporalClient(config);
  let child: ChildProcess | undefined;
  let agentRef: http.Agent | undefined;
  const fileIds: string[] = [];
  try {
    console.log(`[bench] generating ${TARGET_BYTES / MB} MB CSV and XLSX in ${tmp}`);
    const csvFile = path.join(tmp, 'bench.csv');
    await writeCsv(csvFile, TARGET_BYTES);
    const xlsxFile = await writeXlsxOfSize(tmp, TARGET_BYTES);
    const inputs = [
      { format: 'csv', name: 'bench.csv', data: await readFile(csvFile) },
      { format: 'xlsx', name: 'bench.xlsx', data: await readFile(xlsxFile) },
    ];
    for (const i of inputs) console.log(`[bench] ${i.format}: ${(i.data.length / MB).toFixed(2)} MB`);

    const key = await seedUploadKey(knex, config, await seedCompany(knex));

    // BENCH_API_NODE_ARGS: flags for the API's node, e.g. "--max-semi-space-size=1" or "--cpu-prof"
    const nodeArgs = (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
    child = spawn(process.execPath, [...nodeArgs, path.join(__dirname, '..', 'api', 'server.js')], {
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const pid = child.pid!;
    const baseUrl = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const ok = await fetch(`${baseUrl}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (i > 100) throw new Error('the API did not start');
      await new Promise((r) => setTimeout(r, 100));
    }

    // node's http client: one write of the prepared body, no extra copies (a lean client, like curl)
    const agent = new http.Agent({ keepAlive: true });
    agentRef = agent;
    const upload = async (body: Buffer, contentType: string) => {
      const started = process.hrtime.bigint();
      const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(
          `${baseUrl}/files`,
          {
            method: 'POST',
            agent,
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': contentType,
              'content-length': String(body.length),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const json = JSON.parse(text) as { id?: string };
      if (status !== 201) throw new Error(`upload failed: ${status} ${text}`);
      fileIds.push(json.id!);
      return ms;
    };
    const direct = async (data: Buffer, n: number) => {
      const started = process.hrtime.bigint();
      await storage.client.putObject(storage.bucket, storage.key('direct', `${n}`), data, data.length);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };

    // warm up both paths (JIT, connection pools, Temporal connection) with a small file
    const warmCsv = multipart(Buffer.from('a,b\n1,2\n'), 'warm.csv');
    const small = new ExcelJS.Workbook();
    small.addWorksheet('S').addRow(['a', 'b']);
    const warmXlsx = multipart(Buffer.from(await small.xlsx.writeBuffer()), 'warm.xlsx');
    for (let i = 0; i < 3; i++) {
      await upload(warmCsv.body, warmCsv.contentType);
      await upload(warmXlsx.body, warmXlsx.contentType);
    }
    await direct(Buffer.from('warm'), 0);
    await new Promise((r) => setTimeout(r, 500));
    const idle = await readStatus(pid);

    const sampler = sampleRss(async () => (await readStatus(pid).catch(() => idle)).rss);

    const results = [];
    let n = 1;
    for (const input of inputs) {
      const form = multipart(input.data, input.name);
      const apiMs: number[] = [];
      const directMs: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        apiMs.push(await upload(form.body, form.contentType));
        directMs.push(await direct(input.data, n++));
      }
      const mbs = (ms: number) => input.data.length / MB / (ms / 1000);
      results.push({
        format: input.format,
        sizeMB: +(input.data.length / MB).toFixed(2),
        apiMedianMs: Math.round(median(apiMs)),
        directMedianMs: Math.round(median(directMs)),
        apiMBps: +mbs(median(apiMs)).toFixed(1),
        directMBps: +mbs(median(directMs)).toFixed(1),
        ratio: +(median(directMs) / median(apiMs)).toFixed(2),
      });
    }
    let peakRss = Math.max(idle.rss, await sampler.stop());
    const end = await readStatus(pid);
    // VmHWM is the lifetime peak: if it rose during the uploads, it is their peak (samples may miss it)
    if (end.hwm > idle.hwm) peakRss = Math.max(peakRss, end.hwm);
    const growth = (peakRss - idle.rss) / MB;

    console.log('\nUpload through the API vs putObject straight to MinIO (median of %d runs each):', RUNS);
    console.table(results);
    console.log(
      `API process memory: idle RSS ${(idle.rss / MB).toFixed(1)} MB, peak RSS during uploads ${(peakRss / MB).toFixed(1)} MB, ` +
        `growth ${growth.toFixed(1)} MB (target < 64 MB); VmHWM ${(end.hwm / MB).toFixed(1)} MB`,
    );
    for (const r of results) {
      console.log(
        `${r.format}: throughput ratio ${r.ratio} (target >= 0.70) ${r.ratio >= 0.7 ? 'OK' : 'BELOW TARGET'}`,
      );
    }
    console.log(`memory growth ${growth < 64 ? 'OK' : 'ABOVE TARGET'}`);
  } finally {
    agentRef?.destroy();
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child!.once('exit', r));
    }
    for (const id of fileIds) {
      await temporal.workflow
        .getHandle(`report:${id}:v1`)
        .terminate('benchmark done')
        .catch(() => undefined);
    }
    await temporal.connection.close().catch(() => undefined);
    await benchRun.close();
    await rm(tmp, { recursive: true, force: true });
  }
}

runMain(main);
