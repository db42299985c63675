import { TenantModel } from './base';

export class Session extends TenantModel {
  static override tableName = 'sessions';
  static override get hasUpdatedAt(): boolean {
    return false;
  }

  personId!: string;
  demo!: boolean;
  method!: 'password' | 'invitation' | 'google' | 'demo';
  endedAt!: Date | null;
  endReason!: string | null;
}
