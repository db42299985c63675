/**
 * A PostgreSQL proxy on loopback for fault injection: it passes the wire protocol through unchanged, and when
 * armed, lets a transaction that ran a statement matching `after` commit on the server but cuts the
 * connection before its client reads the answer to COMMIT — the commit whose outcome the client never learns.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { Model } from 'objection';
import { createKnex, type KnexOptions } from '../../db/knex';
import { testEnv } from './env';

export interface PgProxy {
  /** a database URL like `databaseUrl`, through the proxy */
  url: string;
  /**
   * The next COMMIT of a transaction that ran a statement matching `after` reaches the server; the
   * connection is cut once the server has answered it, before the client sees the answer.
   */
  cutAfterCommit(after: RegExp): void;
  /** how many commits were cut so far */
  cuts(): number;
  close(): Promise<void>;
}

/** Splits a protocol stream into messages (type byte, then a length that counts itself and the body). */
class Messages {
  private buffer = Buffer.alloc(0);
  constructor(private startup: boolean) {}
  push(chunk: Buffer): Array<{ type: string; body: Buffer; raw: Buffer }> {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const out: Array<{ type: string; body: Buffer; raw: Buffer }> = [];
    for (;;) {
      if (this.startup) {
        // the startup message (and an SSL request) has no type byte
        if (this.buffer.length < 4) break;
        const length = this.buffer.readInt32BE(0);
        if (this.buffer.length < length) break;
        const raw = this.buffer.subarray(0, length);
        this.buffer = this.buffer.subarray(length);
        if (raw.length !== 8 || raw.readInt32BE(4) !== 80877103) this.startup = false;
        out.push({ type: '', body: raw.subarray(4), raw });
        continue;
      }
      if (this.buffer.length < 5) break;
      const length = this.buffer.readInt32BE(1);
      if (this.buffer.length < 1 + length) break;
      const raw = this.buffer.subarray(0, 1 + length);
      this.buffer = this.buffer.subarray(1 + length);
      out.push({ type: String.fromCharCode(raw[0]), body: raw.subarray(5), raw });
    }
    return out;
  }
}

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  let armed: RegExp | undefined;
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    const fromClient = new Messages(true);
    const fromServer = new Messages(false);
    let matched = false; // this connection's transaction ran a statement matching `armed`
    let committing = false; // its COMMIT went to the server: the answer is not passed on
    client.on('data', (chunk: Buffer) => {
      for (const m of fromClient.push(chunk)) {
        // Query ('Q') and Parse ('P') carry the statement's text
        const text = m.type === 'Q' || m.type === 'P' ? m.body.toString('utf8') : '';
        if (/^(?:[^\0]*\0)?\s*begin\b/i.test(text)) matched = false;
        if (armed && armed.test(text)) matched = true;
        if (armed && matched && /^(?:[^\0]*\0)?\s*commit\b/i.test(text)) {
          armed = undefined;
          committing = true;
        }
        upstream.write(m.raw);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      for (const m of fromServer.push(chunk)) {
        if (committing) {
          // ReadyForQuery after the COMMIT: the server has committed; its client never hears of it
          if (m.type === 'Z') {
            cuts++;
            cut();
            return;
          }
          continue;
        }
        client.write(m.raw);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    cutAfterCommit(after) {
      armed = after;
    },
    cuts: () => cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A small pool through the proxy (the app role's when `options.actAs` says so). objection's default knex stays
 * the run's, and knex's warning about the connection the proxy cut is not printed.
 */
export function knexThrough(proxy: PgProxy, options: KnexOptions = {}): Knex {
  const knex = createKnex(proxy.url, 2, options);
  Model.knex(testEnv().appKnex);
  (knex.client as { logger: { warn(message: string): void } }).logger.warn = () => undefined;
  return knex;
}
