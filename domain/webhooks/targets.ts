/**
 * Which addresses a webhook may be sent to. Only globally routable unicast addresses: loopback, RFC 1918,
 * link-local (169.254.169.254 included), CGNAT, unique-local and link-local IPv6, multicast, unspecified,
 * broadcast, reserved and documentation ranges, and IPv6 forms that embed IPv4 (mapped, NAT64, 6to4,
 * Teredo) are refused. IPv4 written in decimal, octal or hex is normalised (WHATWG URL parser, then
 * ipaddr.js) before it is judged.
 *
 * Checked three times: when an endpoint is created, when its URL is changed, and at every attempt against
 * the address actually connected to (a `lookup` that refuses private answers, and a check of the
 * socket's remote address on connect), so a name that re-resolves to a private address (DNS rebinding)
 * is still refused.
 */
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export interface TargetPolicy {
  /** development only: http:// URLs */
  allowHttp: boolean;
  /** tests only: loopback and private addresses */
  allowPrivateTargets: boolean;
}

export class TargetRefusedError extends Error {
  readonly code = 'EWEBHOOKTARGETREFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

/** The range an address belongs to when it is refused (e.g. `loopback`), or null when it may be used. */
export function refusedRange(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  } catch {
    return 'invalid address';
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    const v4 = (parsed as ipaddr.IPv6).toIPv4Address();
    const range = v4.range();
    return range === 'unicast' ? null : `ipv4Mapped ${range}`;
  }
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

function describe(address: string, range: string): string {
  return `${address} is not a public address (${range})`;
}

/** Strips the brackets of an IPv6 literal host. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/** Synchronous checks of a URL: absolute, https (or http when allowed), no credentials, no private IP literal. */
export function checkUrlShape(raw: string, policy: TargetPolicy): { url: URL } | { problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'url must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    return {
      problem:
        url.protocol === 'http:'
          ? 'url must use https (plain http is allowed only in development, WEBHOOK_ALLOW_HTTP)'
          : 'url must use https',
    };
  }
  if (url.username || url.password) return { problem: 'url must not contain credentials' };
  if (!url.hostname) return { problem: 'url must name a host' };
  const host = bareHost(url.hostname);
  if (net.isIP(host) && !policy.allowPrivateTargets) {
    const range = refusedRange(host);
    if (range) return { problem: `url refused: ${describe(host, range)}` };
  }
  return { url };
}

export type Resolver = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, options, callback) => dns.lookup(hostname, options, callback);

function resolveAll(resolver: Resolver, hostname: string, timeoutMs: number): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    resolver(hostname, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(addresses);
    });
  });
}

/**
 * The check made when an endpoint is created or its URL changes: the URL's shape, then every address its
 * host name resolves to. Returns a problem to show (400), or null.
 */
export async function checkTargetUrl(
  raw: string,
  policy: TargetPolicy,
  resolver: Resolver = systemResolver,
): Promise<string | null> {
  const shape = checkUrlShape(raw, policy);
  if ('problem' in shape) return shape.problem;
  const host = bareHost(shape.url.hostname);
  if (net.isIP(host) || policy.allowPrivateTargets) return null;
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(resolver, host, 5_000);
  } catch {
    return `url refused: the host name ${host} does not resolve`;
  }
  if (addresses.length === 0) return `url refused: the host name ${host} does not resolve`;
  for (const { address } of addresses) {
    const range = refusedRange(address);
    if (range) return `url refused: ${host} resolves to ${describe(address, range)}`;
  }
  return null;
}

/**
 * A `lookup` for http(s).request: resolves as usual, then refuses the connection when any answer is not
 * public, so the address connected to is the address checked (no second DNS answer in between).
 */
export function guardedLookup(resolver: Resolver = systemResolver): net.LookupFunction {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    resolver(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const refused = addresses
        .map((a) => ({ address: a.address, range: refusedRange(a.address) }))
        .find((a) => a.range !== null);
      if (refused) {
        return callback(
          new TargetRefusedError(`${hostname} resolves to ${describe(refused.address, refused.range!)}`),
          '',
          0,
        );
      }
      if (addresses.length === 0)
        return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;
