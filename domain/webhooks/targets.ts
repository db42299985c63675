/**
 * Which addresses a webhook may be sent to. Only globally routable unicast addresses: loopback, RFC 1918,
 * link-local (169.254.169.254 included), CGNAT, unique-local and link-local IPv6, multicast, unspecified,
 * broadcast, reserved and documentation ranges are refused. IPv6 forms that embed an IPv4 address are
 * judged by the embedded address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4, Teredo's server and client), and the
 * deprecated IPv4-compatible ::/96, IPv4-translated and local-use NAT64 64:ff9b:1::/48 forms are refused
 * whatever they embed. IPv4 written in decimal, octal or hex is normalised (WHATWG URL parser, then
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

/**
 * Parses an address, reading a trailing dotted IPv4 of an IPv6 literal (`::127.0.0.1`) as its two hex
 * groups first: ipaddr.js reads `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d`, which would hide the
 * deprecated IPv4-compatible form.
 */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const bare = address.replace(/^\[|\]$/g, '');
  const dotted = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(bare);
  if (!dotted) return ipaddr.parse(bare);
  const b = dotted.slice(2).map(Number);
  if (b.some((x) => x > 255)) throw new Error('invalid address');
  const group = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
  return ipaddr.IPv6.parse(`${dotted[1]}${group(b[0], b[1])}:${group(b[2], b[3])}`);
}

/** The IPv4 address in `bytes` from `offset` (XOR-ed with 0xffffffff when `inverted`, as Teredo stores it). */
function ipv4At(bytes: number[], offset: number, inverted = false): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((b) => (inverted ? b ^ 0xff : b)));
}

const startsWith = (bytes: number[], prefix: number[]) => prefix.every((b, i) => bytes[i] === b);
const zeros = (n: number) => new Array<number>(n).fill(0);

/**
 * The IPv4 addresses an IPv6 address embeds, each with the name of its form (RFC 4291, 6052, 8215, 3056,
 * 4380, 6145), and whether the form is refused whatever it embeds (deprecated or not globally routable), or
 * null for other addresses.
 */
function embeddedIPv4(v6: ipaddr.IPv6): { embeds: Array<[string, ipaddr.IPv4]>; always: boolean } | null {
  const b = v6.toByteArray();
  // ::ffff:0:0/96, IPv4-mapped: the embedded address decides
  if (startsWith(b, [...zeros(10), 0xff, 0xff]))
    return { embeds: [['ipv4Mapped', ipv4At(b, 12)]], always: false };
  // ::/96, IPv4-compatible (deprecated by RFC 4291; :: and ::1 are judged as themselves)
  if (startsWith(b, zeros(12)) && (b[12] | b[13] | b[14]) !== 0)
    return { embeds: [['ipv4Compatible', ipv4At(b, 12)]], always: true };
  // ::ffff:0:0:0/96, IPv4-translated (SIIT, RFC 6145): not globally routable
  if (startsWith(b, [...zeros(8), 0xff, 0xff, 0, 0]))
    return { embeds: [['ipv4Translated', ipv4At(b, 12)]], always: true };
  // 64:ff9b::/96, the well-known NAT64 prefix: the translator connects to the embedded address
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, ...zeros(8)]))
    return { embeds: [['nat64', ipv4At(b, 12)]], always: false };
  // 64:ff9b:1::/48, local-use NAT64 (RFC 8215): a site's own translator, where the address sits depends on the
  // site's prefix length; refused whatever it embeds (the /96 position is named)
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 1]))
    return { embeds: [['nat64LocalUse', ipv4At(b, 12)]], always: true };
  // 2002::/16, 6to4: the relay delivers to the IPv4 address in bits 16-47
  if (startsWith(b, [0x20, 0x02])) return { embeds: [['6to4', ipv4At(b, 2)]], always: false };
  // 2001::/32, Teredo: the server's IPv4 in bits 32-63, the client's XOR-ed with 0xffffffff in the last 32
  if (startsWith(b, [0x20, 0x01, 0, 0]))
    return {
      embeds: [
        ['teredoServer', ipv4At(b, 4)],
        ['teredoClient', ipv4At(b, 12, true)],
      ],
      always: false,
    };
  return null;
}

/** The range an address belongs to when it is refused (e.g. `loopback`), or null when it may be used. */
export function refusedRange(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = parseAddress(address);
  } catch {
    return 'invalid address';
  }
  if (parsed.kind() === 'ipv4') {
    const range = parsed.range();
    return range === 'unicast' ? null : range;
  }
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    for (const [form, v4] of embedded.embeds) {
      if (v4.range() !== 'unicast') return `${form} ${v4.toString()} ${v4.range()}`;
    }
    if (!embedded.always) return null;
    const [form, v4] = embedded.embeds[0];
    return `${form} ${v4.toString()} (not globally routable)`;
  }
  const range = v6.range();
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
