import { KeyedTenantModel } from './base';

/** One row change of a comparison (comparison_changes), numbered by `seq` in the engine's order. */
export class ComparisonChange extends KeyedTenantModel {
  static override tableName = 'comparison_changes';
  static override idColumn = ['comparisonId', 'seq'];

  comparisonId!: string;
  seq!: number;
  sheet!: string;
  kind!: string;
  key!: unknown;
  baseRow!: string | number | null;
  targetRow!: string | number | null;
  columns!: unknown;
}
