import type { Scope } from '../../api/routing';
import { TenantModel } from './base';

export class ApiKey extends TenantModel {
  static override tableName = 'api_keys';
  static override get hasUpdatedAt(): boolean {
    return false;
  }

  personId!: string;
  name!: string;
  scopes!: Scope[];
  identifier!: string;
  secretFingerprint!: string;
  lastUsedAt!: Date | null;
  revokedAt!: Date | null;
}
