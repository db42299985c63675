import { TenantModel } from './base';

/** A company's quality rule (domain/rules). `tolerance` is numeric in PostgreSQL: read as exact text. */
export class Rule extends TenantModel {
  static override tableName = 'rules';
  // `file_ids` is a uuid[] column, not JSON
  static override jsonAttributes: string[] = ['params'];

  name!: string;
  kind!: string;
  columnName!: string | null;
  params!: Record<string, unknown>;
  severity!: 'error' | 'warn';
  tolerance!: string;
  active!: boolean;
  fileIds!: string[] | null;
  createdByPersonId!: string | null;
}
