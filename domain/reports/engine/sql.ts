/**
 * The SQL of the type rules, shared by the profile and the steps built on it (rules, comparisons).
 *
 * - Null: an empty cell, or a cell whose text (spaces trimmed, any case) is one of NULL_STRINGS.
 * - Each non-null value falls in exactly one class, the first that matches its trimmed text:
 *   integer  `^[+-]?\d+$` within 64-bit range;
 *   decimal  `^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$` (a finite number that is not an integer);
 *   boolean  true, false, yes, no (any case);
 *   date     `YYYY-MM-DD`, a real calendar date;
 *   datetime `YYYY-MM-DD[T ]HH:MM[:SS[.fff]]`, optionally with `Z` or an offset `±HH[:]MM`;
 *   text     anything else.
 * - A column's inferred type is the narrowest class that holds every non-null value: integer, then
 *   decimal (integers and decimals), boolean, date, datetime (dates and datetimes), else text. A column
 *   with no non-null value is text.
 */
import type { InferredType } from './types';

export const NULL_STRINGS = ['', 'null', 'n/a', 'na', '#n/a', 'nan'] as const;

const NULLS_SQL = NULL_STRINGS.map((s) => `'${s}'`).join(', ');

/** Class codes of `classSql`. */
export const CLASS_CODES: Record<InferredType | 'null', number> = {
  null: 0,
  integer: 1,
  decimal: 2,
  boolean: 3,
  date: 4,
  datetime: 5,
  text: 6,
};

const INTEGER_RE = `'^[+-]?[0-9]+$'`;
const DECIMAL_RE = `'^[+-]?([0-9]+\\.[0-9]*|\\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?$'`;
const DATE_RE = `'^[0-9]{4}-[0-9]{2}-[0-9]{2}$'`;
const DATETIME_RE = `'^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?$'`;

/** The installed macros (created once per connection by `installMacros`). */
export async function installMacros(conn: { run(sql: string): Promise<unknown> }): Promise<void> {
  await conn.run(
    `CREATE OR REPLACE TEMP MACRO ds_is_null(v) AS (v IS NULL OR lower(trim(v)) IN (${NULLS_SQL}))`,
  );
  await conn.run(`CREATE OR REPLACE TEMP MACRO ds_class(v) AS (
    CASE
      WHEN v IS NULL OR lower(trim(v)) IN (${NULLS_SQL}) THEN 0
      WHEN regexp_full_match(trim(v), ${INTEGER_RE}) AND TRY_CAST(trim(v) AS BIGINT) IS NOT NULL THEN 1
      WHEN regexp_full_match(trim(v), ${DECIMAL_RE}) AND isfinite(TRY_CAST(trim(v) AS DOUBLE)) THEN 2
      WHEN lower(trim(v)) IN ('true', 'false', 'yes', 'no') THEN 3
      WHEN regexp_full_match(trim(v), ${DATE_RE}) AND TRY_CAST(trim(v) AS DATE) IS NOT NULL THEN 4
      WHEN regexp_full_match(trim(v), ${DATETIME_RE}) AND TRY_CAST(trim(v) AS TIMESTAMPTZ) IS NOT NULL THEN 5
      ELSE 6
    END)`);
}

/** SQL: true when the cell counts as null. */
export function isNullSql(ident: string): string {
  return `ds_is_null(${ident})`;
}

/** SQL: the class code (CLASS_CODES) of the cell. */
export function classSql(ident: string): string {
  return `ds_class(${ident})`;
}

/**
 * SQL: the typed value of the cell under `type`, NULL when the cell is null or does not parse as that
 * type (integer: BIGINT; decimal: DOUBLE; boolean: BOOLEAN; date: DATE; datetime: TIMESTAMP in UTC;
 * text: the raw text).
 */
export function typedSql(ident: string, type: InferredType): string {
  const v = `trim(${ident})`;
  const notNull = `NOT ${isNullSql(ident)}`;
  switch (type) {
    case 'integer':
      return `CASE WHEN ${notNull} AND regexp_full_match(${v}, ${INTEGER_RE}) THEN TRY_CAST(${v} AS BIGINT) END`;
    case 'decimal':
      return `CASE WHEN ${notNull} AND regexp_full_match(${v}, ${DECIMAL_RE}) THEN TRY_CAST(${v} AS DOUBLE) END`;
    case 'boolean':
      return `CASE lower(${v}) WHEN 'true' THEN true WHEN 'yes' THEN true WHEN 'false' THEN false WHEN 'no' THEN false END`;
    case 'date':
      return `CASE WHEN ${notNull} AND regexp_full_match(${v}, ${DATE_RE}) THEN TRY_CAST(${v} AS DATE) END`;
    case 'datetime':
      return `CASE WHEN ${notNull} AND (regexp_full_match(${v}, ${DATE_RE}) OR regexp_full_match(${v}, ${DATETIME_RE})) THEN timezone('UTC', TRY_CAST(${v} AS TIMESTAMPTZ)) END`;
    case 'text':
      return `CASE WHEN ${notNull} THEN ${ident} END`;
  }
}

/** A SQL string literal. */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
