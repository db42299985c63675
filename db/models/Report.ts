import { TenantModel } from './base';

export const REPORT_STATUSES = ['queued', 'building', 'ready', 'failed'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/** The report of one file version (README "Reports"); rebuilt in place, `build` counts the builds. */
export class Report extends TenantModel {
  static override tableName = 'reports';
  static override jsonAttributes: string[] = ['result'];

  fileId!: string;
  fileVersionId!: string;
  version!: number;
  status!: ReportStatus;
  build!: number;
  workflowId!: string | null;
  failureReason!: string | null;
  failureMessage!: string | null;
  rowsRead!: string | number | null;
  bytesRead!: string | number | null;
  bytesTotal!: string | number | null;
  phase!: string | null;
  result!: unknown;
  resultObjectKey!: string | null;
  resultBytes!: number | null;
  correlationId!: string | null;
  queuedAt!: Date;
  startedAt!: Date | null;
  finishedAt!: Date | null;
}
