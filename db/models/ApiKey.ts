import { TenantModel } from './base';

export class ApiKey extends TenantModel {
  static override tableName = 'api_keys';
  static override get hasUpdatedAt(): boolean {
    return false;
  }

  personId!: string;
  name!: string;
  /** scope names (domain/identity/scopes.ts SCOPES); db/ does not import the domain */
  scopes!: string[];
  identifier!: string;
  secretFingerprint!: string;
  lastUsedAt!: Date | null;
  revokedAt!: Date | null;
}
