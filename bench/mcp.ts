/**
 * Benchmark: the AI-agent endpoint against REST for the same data. One in-process server on loopback over a
 * fresh database; one company with 20 files; a tool call `list_files` (limit 20) as one POST /mcp
 * (JSON-RPC tools/call, the stateless server built for the request, JSON answer) against GET /files?limit=20,
 * alternating rounds so drift affects both. Prints requests per second, p50/p99 of each and the ratio
 * (target: MCP at least 60% of REST).
 *
 *   node dist/bench/mcp.js            (BENCH_REQUESTS, BENCH_CONCURRENCY, BENCH_ROUNDS to change)
 *
 * The callers are 64 admins of the company with a session each, taken in turn, so that no one exceeds the
 * 300-a-minute session budget: every request is counted in full and none is refused (the run fails if one is).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../api/app';
import {
  loadRound,
  mergeRounds,
  runMain,
  seedAdmins,
  sessionTokens,
  startApiBenchRun,
  type LoadResult,
} from './lib';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1500);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PEOPLE = 64;
const FILES = 20;

interface Result extends LoadResult {
  /** CPU time of this process (server and driver) per call, in ms: steadier than req/s on a shared machine */
  cpuMs: number;
}

interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** checks one answer's body (the run fails on a wrong answer, not only on a status) */
  check(status: number, body: string): string | undefined;
}

/** A fixed number of calls at a fixed concurrency over keep-alive connections. */
async function drive(port: number, call: Call, tokens: string[], count: number): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const failures: string[] = [];
  let checked = 0;
  const one = (i: number) =>
    new Promise<number>((resolve, reject) => {
      const token = tokens[i % tokens.length];
      const started = process.hrtime.bigint();
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (call.body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(call.body));
        headers.accept = 'application/json, text/event-stream';
        headers['mcp-protocol-version'] = '2025-06-18';
      }
      const req = http.request(
        { host: '127.0.0.1', port, path: call.path, method: call.method, agent, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const latency = Number(process.hrtime.bigint() - started) / 1e6;
            // every status is checked; every 10th answer is parsed and checked in full (the driver shares the
            // process with the server: parsing each answer would measure the driver's JSON.parse too)
            const status = res.statusCode ?? 0;
            const problem =
              status !== 200 || checked++ % 10 === 0
                ? call.check(status, Buffer.concat(chunks).toString())
                : undefined;
            if (problem) failures.push(problem);
            resolve(latency);
          });
        },
      );
      req.on('error', reject);
      req.end(call.body);
    });
  const cpuBefore = process.cpuUsage();
  const result = await loadRound(count, CONCURRENCY, one);
  const cpu = process.cpuUsage(cpuBefore);
  agent.destroy();
  if (failures.length > 0)
    throw new Error(`${failures.length} calls failed: ${failures.slice(0, 3).join(' | ')}`);
  return { ...result, cpuMs: (cpu.user + cpu.system) / 1000 / count };
}

function merge(results: Result[]): Result {
  const merged = mergeRounds(results);
  return { ...merged, cpuMs: results.reduce((sum, r) => sum + r.cpuMs * r.count, 0) / merged.count };
}

async function main(): Promise<void> {
  const { run, temporal, deps } = await startApiBenchRun();
  const { config, knex } = run;
  let server: http.Server | undefined;
  try {
    const { companyId, people } = await seedAdmins(knex, PEOPLE);
    // 20 files as an upload leaves them (rows only: listing reads no object)
    for (let i = 0; i < FILES; i++) {
      const fileId = randomUUID();
      const datasetId = randomUUID();
      await knex('files').insert({
        id: fileId,
        companyId,
        datasetId,
        originalName: `file-${i}.csv`,
        uploadedByPersonId: people[0].id,
        currentVersion: 1,
        visibility: 'company',
      });
      await knex('datasets').insert({ id: datasetId, companyId, fileId });
    }
    const tokens = await sessionTokens(knex, config, people);

    server = http.createServer(createApp(deps).callback());
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;

    const rest: Call = {
      method: 'GET',
      path: '/files?limit=20',
      check: (status, body) =>
        status === 200 && (JSON.parse(body) as { data: unknown[] }).data.length === FILES
          ? undefined
          : `REST ${status}: ${body.slice(0, 200)}`,
    };
    const mcp: Call = {
      method: 'POST',
      path: '/mcp',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_files', arguments: { limit: 20 } },
      }),
      check: (status, body) => {
        if (status !== 200) return `MCP ${status}: ${body.slice(0, 200)}`;
        const answer = JSON.parse(body) as { result?: { structuredContent?: { data: unknown[] } } };
        return answer.result?.structuredContent?.data.length === FILES
          ? undefined
          : `MCP: ${body.slice(0, 200)}`;
      },
    };

    // warm-up (JIT, connection pools, compiled schemas), not measured
    await drive(port, rest, tokens, 100);
    await drive(port, mcp, tokens, 100);
    const restRounds: Result[] = [];
    const mcpRounds: Result[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      restRounds.push(await drive(port, rest, tokens, REQUESTS));
      mcpRounds.push(await drive(port, mcp, tokens, REQUESTS));
    }
    const restAll = merge(restRounds);
    const mcpAll = merge(mcpRounds);
    const line = (name: string, r: Result) =>
      console.log(
        `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  CPU ${r.cpuMs.toFixed(2)} ms/call  (${r.count} calls)`,
      );
    console.log(
      `list 20 files, ${ROUNDS} alternating rounds of ${REQUESTS} calls, concurrency ${CONCURRENCY}, session tokens`,
    );
    line('GET /files?limit=20 (REST)', restAll);
    line('POST /mcp tools/call list_files (MCP)', mcpAll);
    const ratio = mcpAll.rps / restAll.rps;
    console.log(`MCP / REST throughput: ${(ratio * 100).toFixed(0)}% (target ≥ 60%)`);
    console.log(`REST / MCP CPU per call: ${((restAll.cpuMs / mcpAll.cpuMs) * 100).toFixed(0)}%`);
  } finally {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await temporal.connection.close();
    await run.close();
  }
}

runMain(main);
