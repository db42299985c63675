import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

export type KeyPurpose =
  | 'access-token'
  | 'cursor'
  | 'api-key'
  | 'refresh-token'
  | 'one-time-token'
  | 'webhook-secret'
  | 'idempotent-response'
  | 'idempotent-request'
  | 'sign-in-account';

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

/**
 * AES-256-GCM: `iv (12) | tag (16) | ciphertext`. `aad` binds the box to its place (a row id, a list), so a
 * ciphertext copied elsewhere does not open. Tampering makes `openBox` throw.
 */
export function sealBox(key: Buffer, plaintext: string, aad = ''): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

export function openBox(key: Buffer, sealed: Buffer, aad = ''): string {
  if (sealed.length < 28) throw new Error('sealed value too short');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
}
