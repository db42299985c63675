/** More servers for a test: another app on loopback (own options), or a real API process. */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createApp, type AppOptions, type ServiceApp } from '../../api/app';
import type { Config } from '../../common/config';
import { atEnd, ROOT, testEnv } from './env';

export interface RunningServer {
  baseUrl: string;
  stop(): Promise<void>;
}

/** An app on 127.0.0.1 with this run's dependencies, another config or routes; stopped at the end. */
export async function startApp(
  options: AppOptions & { config?: Partial<Config> } = {},
): Promise<RunningServer & { app: ServiceApp }> {
  const { deps } = testEnv();
  const app = createApp({ ...deps, config: { ...deps.config, ...(options.config ?? {}) } }, options);
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  atEnd(stop);
  return { app, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stop };
}

async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * A real API process (`node dist/api/server.js`) on this run's database, with its own port; waits until
 * GET /health answers (at most 20 s). Stopped with SIGTERM at the end.
 */
export async function startApiProcess(env: Record<string, string> = {}): Promise<RunningServer> {
  const { config } = testEnv();
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'dist', 'api', 'server.js')], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: config.databaseUrl,
      SECRET_KEY: config.secretKey,
      TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
      S3_PREFIX: config.s3.prefix,
      TRUST_PROXY_HOPS: '0',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  atEnd(stop);
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`API process exited: ${stderr}`);
    try {
      const res = await fetch(`${baseUrl}/health`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`API process did not answer within 20 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { baseUrl, stop };
}
