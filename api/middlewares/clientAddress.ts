import type { Next } from 'koa';
import ipaddr from 'ipaddr.js';
import type { AppContext } from '../context';
import { withRequestContext } from '../../common/requestContext';

/** An address in its canonical text form; IPv4-mapped IPv6 (::ffff:1.2.3.4) becomes plain IPv4. */
export function normalizeAddress(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const text = raw.trim().replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(text)) return undefined;
  return ipaddr.process(text).toString();
}

/**
 * The client's address. With 0 trusted hops (the default) it is the socket's peer and X-Forwarded-For is
 * ignored, so it cannot be spoofed. With N trusted proxies in front, each appends the address it received
 * the request from, so the client is the N-th entry from the right; an entry that is not an address makes
 * us fall back to the socket.
 */
export function resolveClientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trustedHops: number,
): string {
  const socket = normalizeAddress(socketAddress) ?? 'unknown';
  if (trustedHops <= 0 || !forwardedFor) return socket;
  const chain = forwardedFor
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (chain.length === 0) return socket;
  const entry = chain[Math.max(0, chain.length - trustedHops)];
  return normalizeAddress(entry) ?? socket;
}

/**
 * Puts the client's address on ctx.state.clientIp (rate limits per address, idempotency on public routes) and
 * on the request context (audit entries).
 */
export function clientAddress(trustedHops: number) {
  return async (ctx: AppContext, next: Next) => {
    ctx.state.clientIp = resolveClientAddress(
      ctx.req.socket.remoteAddress,
      ctx.get('X-Forwarded-For') || undefined,
      trustedHops,
    );
    // audit entries written anywhere in this request carry the address (common/requestContext.ts)
    await withRequestContext(
      { correlationId: ctx.state.correlationId, clientAddress: ctx.state.clientIp },
      next,
    );
  };
}
