/**
 * The webhook signature, scheme v1, for both sides: the service signs with `signWebhook`, receivers check
 * with `verifyWebhook` (docs/webhooks.md "Verifying a delivery").
 *
 *   webhook-signature: v1=<hex HMAC-SHA256(key, `${webhook-timestamp}.${rawBody}`)>
 *
 * The key is the WHOLE secret string, `whsec_` prefix included, as UTF-8 bytes. (Libraries for similar
 * schemes base64-decode the part after the prefix; that gives a different key and never verifies.)
 * Pure: no I/O, no clock unless none is given.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_VERSION = 'v1';
/** Receivers refuse a timestamp this many seconds or more away from their clock. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

function hmacHex(secret: string, timestamp: string, rawBody: string | Buffer): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(`${timestamp}.`, 'utf8');
  mac.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  return mac.digest('hex');
}

/** The `webhook-signature` header value for a body sent at `timestamp` (seconds since 1970). */
export function signWebhook(secret: string, timestamp: number | string, rawBody: string | Buffer): string {
  return `${SIGNATURE_VERSION}=${hmacHex(secret, String(timestamp), rawBody)}`;
}

export type WebhookHeaders =
  | { get(name: string): string | null } // fetch Headers
  | Record<string, string | string[] | undefined>; // node IncomingHttpHeaders (lower-case names)

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? record[Object.keys(record).find((k) => k.toLowerCase() === name) ?? ''];
  return Array.isArray(value) ? value[0] : value;
}

export type VerifyResult =
  | { ok: true; id: string; timestamp: number }
  | { ok: false; reason: 'missing_headers' | 'bad_timestamp' | 'timestamp_out_of_range' | 'bad_signature' };

export interface VerifyOptions {
  /** current time in seconds since 1970 (default: the clock) */
  nowSeconds?: number;
  toleranceSeconds?: number;
}

/**
 * Checks a delivery as a receiver must: over the exact raw body bytes (before any JSON parsing), in
 * constant time, refusing timestamps `toleranceSeconds` (300) or more away from now. Several
 * space-separated signatures in the header are accepted if any one matches.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Buffer,
  options: VerifyOptions = {},
): VerifyResult {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'bad_timestamp' };
  const ts = Number(timestamp);
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - ts) >= (options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) {
    return { ok: false, reason: 'timestamp_out_of_range' };
  }
  const expected = Buffer.from(hmacHex(secret, timestamp, rawBody), 'utf8');
  let matched = false;
  for (const part of signature.split(' ')) {
    const [version, value] = part.split('=', 2);
    if (version !== SIGNATURE_VERSION || value === undefined) continue;
    const given = Buffer.from(value, 'utf8');
    // lengths are public (64 hex digits); the comparison of equal-length values is constant time
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched ? { ok: true, id, timestamp: ts } : { ok: false, reason: 'bad_signature' };
}
