import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export type KeyPurpose =
  'access-token' | 'cursor' | 'api-key' | 'refresh-token' | 'one-time-token' | 'webhook-secret';

/** A 32-byte key for one purpose, derived from SECRET_KEY (HKDF-SHA256), so one leaked key opens nothing else. */
export function deriveKey(secretKey: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'data-service', purpose, 32));
}

/** HMAC-SHA256 fingerprint (hex) of a secret: what is stored instead of tokens and keys. */
export function fingerprint(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
