import type { QueryBuilderType, TransactionOrKnex } from 'objection';
import { BaseModel } from './base';

export type CompanyStatus = 'active' | 'suspended';
/** The plans a company may have chosen: the values the companies_plan_check constraint allows. */
export const PLAN_NAMES = ['free', 'basic', 'premium'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export class Company extends BaseModel {
  static override tableName = 'companies';

  name!: string;
  status!: CompanyStatus;
  plan!: PlanName | null;
  /** the one read-only demo company (domain/identity/demo.ts) */
  isDemo!: boolean;

  /**
   * The company's own row, the way tenant rows are read (`TenantModel.scoped`): a company is the tenant
   * itself, so its row is found by its id.
   */
  static scoped(companyId: string, trx?: TransactionOrKnex): QueryBuilderType<Company> {
    if (!companyId) throw new Error('scoped query without a company');
    return Company.query(trx).context({ companyId }).where('companies.id', companyId);
  }

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
