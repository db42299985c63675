import { randomBytes } from 'node:crypto';
import { fingerprint } from '../../common/secrets';

export const KEY_PREFIX = 'svc_live_';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function randomBase62(length: number): string {
  // rejection sampling keeps every character equally likely
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export interface NewKey {
  /** the full key, shown once */
  key: string;
  identifier: string;
  secretFingerprint: string;
}

/** `svc_live_<identifier>_<secret>`: 12 base62 characters to find the key, 40 (≈238 bits) of secret. */
export function generateKey(fingerprintKey: Buffer): NewKey {
  const identifier = randomBase62(12);
  const secret = randomBase62(40);
  const key = `${keyPrefix(identifier)}_${secret}`;
  return {
    key,
    identifier,
    secretFingerprint: fingerprint(fingerprintKey, key),
  };
}

/** What lists show of a key: svc_live_<identifier>. */
export function keyPrefix(identifier: string): string {
  return `${KEY_PREFIX}${identifier}`;
}

/** The identifier part of a well-formed key, or null. */
export function parseKey(token: string): { identifier: string } | null {
  const match = /^svc_live_([A-Za-z0-9]{12})_([A-Za-z0-9]{40})$/.exec(token);
  return match ? { identifier: match[1] } : null;
}

export function isApiKeyToken(token: string): boolean {
  return token.startsWith(KEY_PREFIX);
}
