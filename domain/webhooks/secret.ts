/**
 * Webhook signing secrets: made here, shown once, stored encrypted (AES-256-GCM) because the service must
 * read them back to sign. The key derives from SECRET_KEY for this purpose only; the endpoint id is bound
 * as associated data, so a ciphertext copied onto another endpoint row does not decrypt.
 */
import { randomBytes } from 'node:crypto';
import { deriveKey, openBox, sealBox } from '../../common/secrets';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const FORMAT = 'v1';

/** `whsec_` followed by 32 random bytes in base64url (43 characters). */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

export interface WebhookSecretBox {
  seal(endpointId: string, secret: string): string;
  open(endpointId: string, sealed: string): string;
}

export function webhookSecretBox(secretKey: string): WebhookSecretBox {
  const key = deriveKey(secretKey, 'webhook-secret');
  return {
    seal(endpointId, secret) {
      return `${FORMAT}:${sealBox(key, secret, endpointId).toString('base64')}`;
    },
    open(endpointId, sealed) {
      const [format, payload] = sealed.split(':', 2);
      if (format !== FORMAT || !payload) throw new Error('unknown webhook secret format');
      return openBox(key, Buffer.from(payload, 'base64'), endpointId);
    },
  };
}
