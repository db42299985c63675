import { TenantModel } from './base';

export type Role = 'admin' | 'employee';
export type PersonStatus = 'not_activated' | 'active' | 'disabled';

export class Person extends TenantModel {
  static override tableName = 'people';

  email!: string;
  name!: string;
  role!: Role;
  status!: PersonStatus;
  passwordHash!: string | null;
  /** the Google subject, recorded at the first Google sign-in */
  googleSubject!: string | null;
}
