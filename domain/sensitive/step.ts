/**
 * Sensitive-data detection as an analysis step of the report pass: per sheet, a sample of about 5,000
 * rows (every k-th row by a hash of its row number), of which each column's first 500 distinct non-null
 * values are looked at, and — in one scan of the whole sheet — each column's strong-secret candidates are
 * read from the DuckDB table the pass loaded (never from the file again), decided by ./decide.ts, and the values of every flagged column are
 * withheld from the profile (top values, min, max, quantiles, mean and standard deviation) before it is
 * saved. The section lists {sheet, column, kinds: [{kind, share}]} per flagged column — never a value —
 * and nothing here logs.
 */
import { literal, NULL_STRINGS, type AnalysisStep, type ColumnProfile } from '../reports/engine';
import { decideColumn, SAMPLE_SIZE, type KindShare } from './decide';
import { MAX_DETECTED_LENGTH, STRONG_MIN_BYTES, STRONG_PREFILTER } from './detectors';

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

/** Rows read for the sample (about): every k-th row by a hash of its row number, k = rows / SAMPLE_ROWS. */
export const SAMPLE_ROWS = 5_000;

const NULL_TEXT = new Set<string>(NULL_STRINGS);

function isNullText(value: unknown): boolean {
  return (
    value === null ||
    value === undefined ||
    NULL_TEXT.has(
      String(value as string)
        .trim()
        .toLowerCase(),
    )
  );
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
        if (!sheetProfile || sheetProfile.rows === 0) continue;
        const columns = sheet.columns.flatMap((column) => {
          const columnProfile = sheetProfile.columnProfiles.find((c) => c.position === column.position);
          if (!columnProfile || columnProfile.nonNull === 0) return [];
          return SKIPPED_TYPES.has(columnProfile.inferredType) ? [] : [{ column, columnProfile }];
        });
        if (columns.length === 0) continue;
        const rn = sheet.rowNumberColumn;
        // 1. the sample: every k-th row (by a hash of the row number: deterministic, spread over the file)
        const k = Math.max(1, Math.floor(sheetProfile.rows / SAMPLE_ROWS));
        const sampled = await conn.runAndReadAll(
          `SELECT ${columns.map(({ column }) => column.ident).join(', ')} FROM ${sheet.table}
           ${k > 1 ? `WHERE hash(${rn}) % ${k} = 0` : ''} ORDER BY ${rn}`,
        );
        const sampleColumns = sampled.getColumnsJS();
        // 2. strong-secret candidates of the whole columns, in one scan (at most 50 per column); only text
        // columns whose longest value could hold one (an integer column or short codes never do)
        const strongColumns = columns
          .map((c, i) => ({ ...c, i }))
          .filter(
            ({ columnProfile }) =>
              columnProfile.inferredType === 'text' &&
              (columnProfile.length?.max ?? Infinity) >= STRONG_MIN_BYTES,
          );
        const strong =
          strongColumns.length === 0
            ? null
            : await conn.runAndReadAll(
                `SELECT ${strongColumns
                  .map(
                    ({ column, i }) =>
                      // raw text (the pattern allows surrounding spaces): no per-value trim over the column
                      `min(${column.ident}, ${MAX_STRONG_CANDIDATES}) FILTER (WHERE regexp_matches(${column.ident}, ${literal(STRONG_PREFILTER)})) AS s${i}`,
                  )
                  .join(', ')} FROM ${sheet.table}`,
              );
        const strongRow = strong?.getRowObjectsJS()[0] ?? {};
        columns.forEach(({ column, columnProfile }, i) => {
          const sample: string[] = [];
          const seen = new Set<string>();
          for (const raw of sampleColumns[i] ?? []) {
            if (sample.length >= SAMPLE_SIZE) break;
            if (isNullText(raw)) continue;
            const value = String(raw as string).trim();
            if (value.length > MAX_DETECTED_LENGTH || seen.has(value)) continue;
            seen.add(value);
            sample.push(value);
          }
          const candidates = strongRow[`s${i}`];
          const strongCandidates = Array.isArray(candidates)
            ? candidates.map((c) => String(c as string).trim())
            : [];
          const kinds = decideColumn({ name: column.name, sample, strongCandidates });
          if (kinds.length === 0) return;
          flagged.push({ sheet: sheet.name, column: column.name, kinds });
          withholdValues(columnProfile);
        });
      }
      return { columns: flagged, sampleSize: SAMPLE_SIZE };
    },
  };
}
