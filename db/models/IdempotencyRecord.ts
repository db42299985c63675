import { KeyedTenantModel } from './base';

/**
 * An Idempotency-Key record (idempotency_keys; api/middlewares/idempotency.ts), keyed by scope and key.
 * Records of public routes (scope `address:<ip>`) have no company: they are read and written only under the
 * named system task 'idempotency-public', never through `scoped()`.
 */
export class IdempotencyRecord extends KeyedTenantModel {
  static override tableName = 'idempotency_keys';
  static override idColumn = ['scope', 'key'];

  scope!: string;
  key!: string;
  fingerprint!: string;
  state!: 'running' | 'done';
  responseStatus!: number | null;
  responseHeaders!: Record<string, string> | null;
  responseBody!: string | null;
  lockedUntil!: Date | null;
  expiresAt!: Date;
}
