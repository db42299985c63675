import { BaseModel } from './base';

export type CompanyStatus = 'active' | 'suspended';
import type { PlanName } from '../../common/plans';
export type { PlanName };

export class Company extends BaseModel {
  static override tableName = 'companies';

  name!: string;
  status!: CompanyStatus;
  plan!: PlanName | null;
  /** the one read-only demo company (domain/identity/demo.ts) */
  isDemo!: boolean;

  static override get jsonSchema() {
    return {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        status: { enum: ['active', 'suspended'] },
        plan: { enum: ['free', 'basic', 'premium', null] },
      },
    };
  }
}
