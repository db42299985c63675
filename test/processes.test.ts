/** The real entry points: they start from configuration, log JSON, and stop cleanly on SIGTERM. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT, testEnv } from './helpers/env';

/** The variables of `env` set to '' are left out of the child's environment. */
function withoutEmpty(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
}

function start(entry: string, env: Record<string, string>): { child: ChildProcess; lines: string[] } {
  const { config } = testEnv();
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', entry)], {
    env: withoutEmpty({
      ...process.env,
      DATABASE_URL: config.databaseUrl,
      TEMPORAL_TASK_QUEUE: `${config.temporal.taskQueue}-proc`,
      S3_PREFIX: config.s3.prefix,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
      // a test run: the built-in development SECRET_KEY is accepted (the cases below that need NODE_ENV unset
      // pass NODE_ENV: '' to remove it)
      NODE_ENV: 'test',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  child.stdout!.on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter(Boolean)));
  child.stderr!.on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter(Boolean)));
  return { child, lines };
}

async function waitForLine(lines: string[], pattern: RegExp, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = lines.find((l) => pattern.test(l));
    if (hit) return hit;
    if (Date.now() > deadline)
      throw new Error(`no log line matching ${String(pattern)}:\n${lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('processes', function () {
  this.timeout(90_000);

  it('the API answers, then on SIGTERM stops accepting, finishes and exits 0', async () => {
    const { child, lines } = start('api/server.js', {});
    const exited = exitOf(child);
    const listening = JSON.parse(await waitForLine(lines, /api listening/, 20_000)) as { address: string };
    expect(listening).to.have.property('address');
    const address = (listening.address as string).replace(/:0$/, '');
    expect(address).to.match(/^http:\/\/127\.0\.0\.1/);
    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
    await waitForLine(lines, /api stopped/, 1000);
  });

  it('a bad configuration stops the API at start with a message naming the variable', async () => {
    const { child, lines } = start('api/server.js', { PORT: 'eighty' });
    expect(await exitOf(child)).to.equal(1);
    await waitForLine(lines, /PORT must be a whole number/, 1000);
  });

  it('fails closed: without NODE_ENV the API and the worker refuse the development SECRET_KEY', async () => {
    for (const entry of ['api/server.js', 'worker/index.js']) {
      const { child, lines } = start(entry, { NODE_ENV: '', SECRET_KEY: '', ALLOW_DEVELOPMENT_DEFAULTS: '' });
      expect(await exitOf(child), entry).to.equal(1);
      await waitForLine(lines, /SECRET_KEY is the built-in development value/, 1000);
    }
  });

  it('ALLOW_DEVELOPMENT_DEFAULTS=true (scripts/start.sh) lets the API start without NODE_ENV', async () => {
    const { child, lines } = start('api/server.js', {
      NODE_ENV: '',
      SECRET_KEY: '',
      ALLOW_DEVELOPMENT_DEFAULTS: 'true',
    });
    const exited = exitOf(child);
    await waitForLine(lines, /api listening/, 20_000);
    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });

  it('a worker whose analysis engine cannot start (its work folder cannot be made) stops at start, saying why', async () => {
    // a folder under a regular file cannot be created
    const { child, lines } = start('worker/index.js', {
      REPORT_WORK_DIR: path.join(ROOT, 'package.json', 'work'),
    });
    expect(await exitOf(child)).to.equal(1);
    await waitForLine(lines, /the analysis engine \(DuckDB\) cannot start in .*package\.json/, 1000);
    expect(lines.some((l) => /worker running/.test(l))).to.equal(false);
  });

  it('the worker starts polling and drains on SIGTERM, exiting 0', async () => {
    // a work folder holding what a worker killed mid-build two hours ago left, and a build of now
    const workDir = await mkdtemp(path.join(os.tmpdir(), 'worker-proc-'));
    const stale = path.join(workDir, 'build-f-v1-b1-0000aaaa');
    const fresh = path.join(workDir, 'compare-0000bbbb');
    for (const folder of [stale, fresh]) {
      await mkdir(path.join(folder, 'duckdb'), { recursive: true });
      await writeFile(path.join(folder, 'load-x.raw'), 'a,b\n');
    }
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(stale, twoHoursAgo, twoHoursAgo);
    const { child, lines } = start('worker/index.js', { REPORT_WORK_DIR: workDir });
    const exited = exitOf(child);
    // its analysis engine checked first, with the version and settings in the log
    const ready = JSON.parse(await waitForLine(lines, /analysis engine ready/, 60_000)) as Record<
      string,
      unknown
    >;
    expect(ready.duckdb).to.match(/^v\d+\.\d+/);
    expect(ready).to.include({ threads: 2 });
    const running = JSON.parse(await waitForLine(lines, /worker running/, 60_000)) as Record<string, string>;
    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
    await waitForLine(lines, /worker stopped/, 1000);
    // the stale folder was removed at start; the fresh one, which may be a running build's, was not
    const left = await readdir(workDir);
    await rm(workDir, { recursive: true, force: true });
    expect(left).to.deep.equal(['compare-0000bbbb']);
    // its dispatcher workflow and its Schedules (the ids its log line names) belong to its task queue: remove
    // them, or the Schedules fire every hour for ever, each firing a workflow no worker will run (the end of
    // the run would remove them too, test/helpers/temporalCleanup.ts; this checks the worker's own ids)
    const { temporal, config } = testEnv();
    const queue = `${config.temporal.taskQueue}-proc`;
    expect(running).to.include({ taskQueue: queue, dispatcherId: `outbox-dispatcher:${queue}` });
    await temporal.workflow
      .getHandle(running.dispatcherId)
      .terminate('test done')
      .catch(() => undefined);
    const scheduleIds = Object.entries(running)
      .filter(([key]) => /ScheduleId$|RetentionId$/.test(key))
      .map(([, id]) => id);
    expect(scheduleIds).to.have.members([
      `retention:webhook-deliveries:${queue}`,
      `retention:file-orphans:${queue}`,
      `billing:schedule:${queue}`,
      `retention:notifications:${queue}`,
      `retention:audit-log:${queue}`,
    ]);
    for (const id of scheduleIds) await temporal.schedule.getHandle(id).delete();
  });
});
