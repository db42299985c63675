import { randomUUID } from 'node:crypto';
import {
  Model,
  type ModelClass,
  type QueryBuilderType,
  type QueryContext,
  type TransactionOrKnex,
} from 'objection';

/** Shared behaviour: UUID ids, timestamps maintained by the model, ISO strings out. */
export class BaseModel extends Model {
  id!: string;
  createdAt!: Date;
  updatedAt?: Date;

  static get hasUpdatedAt(): boolean {
    return true;
  }

  override $beforeInsert(_ctx: QueryContext): void {
    // tables keyed by other columns (usage counters, idempotency records) get no generated id
    if (!this.id && (this.constructor as typeof BaseModel).idColumn === 'id') this.id = randomUUID();
  }

  override $beforeUpdate(): void {
    if ((this.constructor as typeof BaseModel).hasUpdatedAt) this.updatedAt = new Date();
  }
}

/**
 * Every tenant-owned row. The one scoping mechanism: `Model.scoped(companyId, trx)` returns a query
 * limited to the company and carries the company in the query context, so inserts through it are
 * stamped with the company and an insert that names another company is refused.
 */
export class TenantModel extends BaseModel {
  companyId!: string;

  static scoped<M extends TenantModel>(
    this: new () => M,
    companyId: string,
    trx?: TransactionOrKnex,
  ): QueryBuilderType<M> {
    if (!companyId) throw new Error('scoped query without a company');
    const model = this as unknown as ModelClass<M>;
    const query: QueryBuilderType<M> = model.query(trx);
    return query.context({ companyId }).where(`${model.tableName}.companyId`, companyId);
  }

  override $beforeInsert(ctx: QueryContext): void {
    super.$beforeInsert(ctx);
    const scopedTo = (ctx as { companyId?: string }).companyId;
    if (scopedTo) {
      if (this.companyId && this.companyId !== scopedTo)
        throw new Error('insert into another company refused');
      this.companyId = scopedTo;
    }
    if (!this.companyId) throw new Error(`${this.constructor.name} insert without company`);
  }
}

/**
 * A tenant table keyed by other columns than a generated `id` (set `idColumn`) and without `updated_at`:
 * usage counters, quota notices, Idempotency-Key records.
 */
export class KeyedTenantModel extends TenantModel {
  static override get hasUpdatedAt(): boolean {
    return false;
  }
}
