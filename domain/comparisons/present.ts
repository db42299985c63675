import type { Comparison } from '../../db/models';
import type { ComparisonSummary } from './engine';

export interface ComparisonView {
  id: string;
  fileId: string;
  base: { fileId: string; version: number };
  target: { fileId: string; version: number };
  automatic: boolean;
  keyColumns: string[] | null;
  status: string;
  progress: { phase: string | null; sheetsDone: number; sheetsTotal: number; changesSaved: number } | null;
  failureReason: string | null;
  failureMessage: string | null;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  result: (ComparisonSummary & { changeCount: number }) | null;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function presentComparison(row: Comparison): ComparisonView {
  const ready = row.status === 'ready' && row.result;
  return {
    id: row.id,
    fileId: row.fileId,
    base: { fileId: row.fileId, version: row.baseVersion },
    target: { fileId: row.fileId, version: row.targetVersion },
    automatic: row.automatic,
    keyColumns: row.keyColumns,
    status: row.status,
    progress:
      row.status === 'comparing'
        ? {
            phase: row.phase,
            sheetsDone: row.sheetsDone ?? 0,
            sheetsTotal: row.sheetsTotal ?? 0,
            changesSaved: Number(row.changesSaved ?? 0),
          }
        : null,
    failureReason: row.failureReason,
    failureMessage: row.failureMessage,
    queuedAt: iso(row.queuedAt)!,
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
    result: ready
      ? { ...(row.result as ComparisonSummary), changeCount: Number(row.changeCount ?? 0) }
      : null,
  };
}

export interface ChangeRow {
  seq: number;
  sheet: string;
  kind: string;
  key: Record<string, string | null> | null;
  baseRow: string | number | null;
  targetRow: string | number | null;
  columns: Array<{ column: string; old: string | null; new: string | null }> | null;
}

export function presentChange(r: ChangeRow) {
  return {
    sheet: r.sheet,
    kind: r.kind,
    key: r.key,
    baseRow: r.baseRow === null ? null : Number(r.baseRow),
    targetRow: r.targetRow === null ? null : Number(r.targetRow),
    // JSONB keeps no key order: restore the documented one
    columns: r.columns === null ? null : r.columns.map((c) => ({ column: c.column, old: c.old, new: c.new })),
  };
}
