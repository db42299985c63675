/**
 * Sensitive-data detection as an analysis step of the report pass: per column, a bounded sample of its
 * distinct values and the whole column's strong-secret candidates are read from the DuckDB table the pass
 * loaded (never from the file again), decided by ./decide.ts, and the values of every flagged column are
 * withheld from the profile (top values, min, max, quantiles, mean and standard deviation) before it is
 * saved. The section lists {sheet, column, kinds: [{kind, share}]} per flagged column — never a value —
 * and nothing here logs.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { isNullSql, literal, type AnalysisStep, type ColumnProfile } from '../reports/engine';
import { decideColumn, SAMPLE_SIZE, type KindShare } from './decide';
import { MAX_DETECTED_LENGTH, STRONG_PREFILTER } from './detectors';

/** Distinct strong-secret candidates read per column (each is validated; one valid match is enough). */
export const MAX_STRONG_CANDIDATES = 50;

/** Types whose values can never be one of the detected kinds: such columns are skipped. */
const SKIPPED_TYPES = new Set(['decimal', 'boolean', 'date', 'datetime']);

export interface FlaggedColumn {
  sheet: string;
  column: string;
  kinds: KindShare[];
}

export interface SensitiveSection {
  columns: FlaggedColumn[];
  /** distinct values sampled per column at most */
  sampleSize: number;
}

async function strings(conn: DuckDBConnection, sql: string): Promise<string[]> {
  const reader = await conn.runAndReadAll(sql);
  return reader.getColumnsJS()[0]?.map((v) => String(v as string)) ?? [];
}

/** Withholds every statistic of a flagged column that is (or may be) one of its values. */
export function withholdValues(column: ColumnProfile): void {
  column.topValues = [];
  column.min = null;
  column.max = null;
  column.quantiles = null;
  column.mean = null;
  column.stddev = null;
}

export function sensitiveStep(): AnalysisStep<SensitiveSection> {
  return {
    name: 'sensitiveData',
    async run({ conn, loaded, profile }) {
      const flagged: FlaggedColumn[] = [];
      for (const sheet of loaded.sheets) {
        const sheetProfile = profile.sheets.find((p) => p.index === sheet.index);
        if (!sheetProfile) continue;
        for (const column of sheet.columns) {
          const columnProfile = sheetProfile.columnProfiles.find((c) => c.position === column.position);
          if (!columnProfile || columnProfile.nonNull === 0) continue;
          if (SKIPPED_TYPES.has(columnProfile.inferredType)) continue;
          const v = `trim(${column.ident})`;
          const values = `FROM ${sheet.table} WHERE NOT ${isNullSql(column.ident)} AND length(${column.ident}) <= ${MAX_DETECTED_LENGTH}`;
          // a deterministic pseudo-random sample of the distinct values (ordered by their hash)
          const sample = await strings(
            conn,
            `SELECT v FROM (SELECT DISTINCT ${v} AS v ${values}) ORDER BY hash(v), v LIMIT ${SAMPLE_SIZE}`,
          );
          const strongCandidates = await strings(
            conn,
            `SELECT DISTINCT ${v} AS v ${values} AND regexp_matches(${v}, ${literal(STRONG_PREFILTER)}) LIMIT ${MAX_STRONG_CANDIDATES}`,
          );
          const kinds = decideColumn({ name: column.name, sample, strongCandidates });
          if (kinds.length === 0) continue;
          flagged.push({ sheet: sheet.name, column: column.name, kinds });
          withholdValues(columnProfile);
        }
      }
      return { columns: flagged, sampleSize: SAMPLE_SIZE };
    },
  };
}
