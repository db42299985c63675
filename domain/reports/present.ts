import type { FileVersion, Report } from '../../db/models';
import type { Profile } from './engine';

export interface ReportResult {
  profile: Profile;
  /** sections contributed by the pipeline's extension steps (rules, detectors), by step name */
  sections: Record<string, unknown>;
}

export interface ReportView {
  fileId: string;
  version: number;
  reportId: string | null;
  build: number;
  status: 'queued' | 'building' | 'ready' | 'failed';
  progress: { rowsRead: number; bytesRead: number; bytesTotal: number; phase: string | null } | null;
  failure: { reason: string; message: string | null } | null;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  profile: Profile | null;
  sections: Record<string, unknown> | null;
}

function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString();
}

/**
 * The report resource. A version whose build has not created its row yet (the workflow is about to
 * start) is shown as `queued`.
 */
export function presentReport(
  version: FileVersion,
  report: Report | undefined,
  result: ReportResult | null,
): ReportView {
  if (!report) {
    return {
      fileId: version.fileId,
      version: version.version,
      reportId: null,
      build: 1,
      status: 'queued',
      progress: null,
      failure: null,
      queuedAt: iso(version.createdAt)!,
      startedAt: null,
      finishedAt: null,
      profile: null,
      sections: null,
    };
  }
  return {
    fileId: report.fileId,
    version: report.version,
    reportId: report.id,
    build: report.build,
    status: report.status,
    progress:
      report.status === 'building'
        ? {
            rowsRead: Number(report.rowsRead ?? 0),
            bytesRead: Number(report.bytesRead ?? 0),
            bytesTotal: Number(report.bytesTotal ?? 0),
            phase: report.phase,
          }
        : null,
    failure:
      report.status === 'failed'
        ? { reason: report.failureReason ?? 'internal_error', message: report.failureMessage }
        : null,
    queuedAt: iso(report.queuedAt)!,
    startedAt: iso(report.startedAt),
    finishedAt: iso(report.finishedAt),
    profile: result?.profile ?? null,
    sections: result ? result.sections : null,
  };
}
