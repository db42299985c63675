import { TenantModel } from './base';

export const COMPARISON_STATUSES = ['queued', 'comparing', 'ready', 'failed'] as const;
export type ComparisonStatus = (typeof COMPARISON_STATUSES)[number];

/** A comparison of two versions of one file (README "Comparisons"); its row changes are comparison_changes. */
export class Comparison extends TenantModel {
  static override tableName = 'comparisons';
  static override jsonAttributes: string[] = ['result', 'keyColumns'];

  fileId!: string;
  baseVersionId!: string;
  targetVersionId!: string;
  baseVersion!: number;
  targetVersion!: number;
  automatic!: boolean;
  keyColumns!: string[] | null;
  status!: ComparisonStatus;
  failureReason!: string | null;
  failureMessage!: string | null;
  phase!: string | null;
  sheetsDone!: number | null;
  sheetsTotal!: number | null;
  changesSaved!: string | number | null;
  result!: unknown;
  changeCount!: string | number | null;
  workflowId!: string | null;
  correlationId!: string | null;
  requestedByPersonId!: string | null;
  requestedByApiKeyId!: string | null;
  queuedAt!: Date;
  startedAt!: Date | null;
  finishedAt!: Date | null;
}
