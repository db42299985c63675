/**
 * One HTTP POST of a webhook, guarded against private targets at the address actually connected to.
 * Never throws: the outcome is a response status or an error text for the delivery record.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { checkUrlShape, guardedLookup, refusedRange, type Resolver, type TargetPolicy } from './targets';

export interface PostOutcome {
  /** the receiver's status code, when it answered */
  status: number | null;
  /** why the attempt failed without an answer (refused target, connection error, timeout) */
  error: string | null;
}

export interface WebhookSender {
  post(url: string, headers: Record<string, string>, body: string): Promise<PostOutcome>;
  close(): void;
}

/** Bodies of answers are read and dropped; a receiver that sends more than this gets its connection closed. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export function createWebhookSender(options: {
  policy: TargetPolicy;
  timeoutMs: number;
  resolver?: Resolver;
}): WebhookSender {
  const { policy, timeoutMs } = options;
  const lookup = policy.allowPrivateTargets ? undefined : guardedLookup(options.resolver);
  // Kept-alive connections: a pooled socket was checked when it connected. Idle ones close after 2 s,
  // before the usual 5 s server keep-alive, so a reused socket is rarely one the receiver is closing.
  const agents = {
    'http:': new http.Agent({ keepAlive: true, timeout: 2_000, maxSockets: 256 }),
    'https:': new https.Agent({ keepAlive: true, timeout: 2_000, maxSockets: 256 }),
  };

  function once(
    url: URL,
    headers: Record<string, string>,
    body: Buffer,
    waitMs: number,
  ): Promise<PostOutcome & { retryStale?: boolean }> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (outcome: PostOutcome & { retryStale?: boolean }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const client = url.protocol === 'https:' ? https : http;
      const req = client.request(url, {
        method: 'POST',
        agent: agents[url.protocol as 'http:' | 'https:'],
        headers: { ...headers, 'content-length': String(body.length) },
        ...(lookup ? { lookup } : {}),
      });
      const timer = setTimeout(() => {
        finish({ status: null, error: `no answer within ${timeoutMs} ms` });
        req.destroy();
      }, waitMs);
      req.on('socket', (socket: net.Socket) => {
        if (policy.allowPrivateTargets) return;
        // the address actually connected to, whatever resolved it (an IP literal skips `lookup`)
        const check = () => {
          const remote = socket.remoteAddress;
          const range = remote ? refusedRange(remote) : 'unknown address';
          if (range) {
            finish({
              status: null,
              error: `refused: connected address ${remote ?? '?'} is not public (${range})`,
            });
            req.destroy();
          }
        };
        if (socket.remoteAddress) check();
        else socket.once('connect', check);
      });
      req.on('response', (res) => {
        finish({ status: res.statusCode ?? null, error: null });
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('error', () => undefined);
        const drain = setTimeout(() => res.destroy(), timeoutMs);
        res.on('close', () => clearTimeout(drain));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        const staleSocket =
          req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE') && !settled;
        if (staleSocket) return finish({ status: null, error: describeError(err), retryStale: true });
        finish({ status: null, error: describeError(err) });
      });
      req.end(body);
    });
  }

  return {
    async post(raw, headers, body) {
      // the URL again (it may have been stored under other settings) and a private IP literal
      const shape = checkUrlShape(raw, policy);
      if ('problem' in shape) return { status: null, error: shape.problem };
      const bytes = Buffer.from(body, 'utf8');
      const started = Date.now();
      const first = await once(shape.url, headers, bytes, timeoutMs);
      // A kept-alive connection the receiver had just closed: the request never reached it, send it once
      // more on a fresh connection (Node's documented pattern, `request.reusedSocket`).
      if (first.retryStale) {
        const second = await once(shape.url, headers, bytes, Math.max(1, timeoutMs - (Date.now() - started)));
        return { status: second.status, error: second.error };
      }
      return { status: first.status, error: first.error };
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

function describeError(err: NodeJS.ErrnoException): string {
  if ((err as { code?: string }).code === 'EWEBHOOKTARGETREFUSED') return `refused: ${err.message}`;
  const code = err.code ? `${err.code}: ` : '';
  return `${code}${err.message}`.slice(0, 500);
}
