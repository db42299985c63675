/**
 * The SQL of the type rules, shared by the profile and the steps built on it (rules, comparisons).
 *
 * - Null: an empty cell, or a cell whose text, spaces around it ignored and in any case, is one of
 *   NULL_STRINGS (`''` covers cells of spaces only).
 * - Each non-null value falls in exactly one class, the first that matches its text (spaces around it
 *   ignored):
 *   integer  `[+-]?[0-9]+` within the 64-bit range;
 *   decimal  `[+-]?([0-9]+.[0-9]*|.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?`, a finite number that is not an integer
 *            (no thousands separators; a decimal comma only as below);
 *   boolean  true, false, yes, no (any case);
 *   date     `YYYY-MM-DD`, a real calendar date;
 *   datetime `YYYY-MM-DD[T ]HH:MM[:SS[.fff]]` (hours 00–23), optionally with `Z` or an offset `±HH[:]MM` from
 *   −18:00 to +18:00 (read as UTC);
 *   text     anything else.
 * - In a comma-delimited CSV a quoted number whose thousands are grouped by commas — `"1,234"`, `"-12,345.5"` —
 *   is read without them (`1234`, `-12345.5`), and dates written with slashes in the order the file's dates
 *   show (`3/15/2024`, `3/15/2024 2:30 PM` month-first as the United States write them; `15/3/2024` day-first)
 *   as ISO dates and datetimes. A tab-delimited file's numbers are read one way or the other as the cells of its
 *   first 64 KB show (`tabNotation`), else as written.
 * - In a semicolon-delimited CSV (European notation) a number written with a decimal comma — `1,5`, `-0,25`,
 *   `1.234,56` (points grouping thousands before the comma) — is read as that number with a decimal point
 *   (`1.5`, `1234.56`), and a day-first date — `15.03.2024`, `5/3/2024`, `15.03.2024 14:30` — as the ISO date
 *   or datetime (`2024-03-15`, `2024-03-05`, `2024-03-15 14:30:00`). `notationCellSql` rewrites such a cell as
 *   it is loaded (`CellNotation`), so every step after the load sees the rewritten text. Nothing else changes:
 *   `1.234` alone stays 1.234, `15.03.24` (a two-digit year) stays text. A comma-delimited file's numbers are not
 *   read so (there a comma groups thousands); a tab-delimited one's only when its first cells show it.
 * - In any CSV/TSV a number with a currency sign (`$1,234.50`, `1.234,50 €`) is that number and one with a percent
 *   sign a hundredth of it (`12%` is 0.12), in the file's decimal mark, when the file has such a sign next to a
 *   digit (`CellNotation.units`).
 * - A column's inferred type is the narrowest class that holds every non-null value: integer, then
 *   decimal (integers and decimals), boolean, date, datetime (dates and datetimes), else text. A column
 *   with no non-null value is text.
 */
import type { DownloadFacts, SlashDateOrder } from './csvText';
import type { InferredType } from './types';

export const NULL_STRINGS = ['', 'null', 'n/a', 'na', '#n/a', 'nan', '#nv', '#n/d', '#n/b'] as const;

/**
 * The error values spreadsheet programs write to CSV for a formula without a valid result, as Excel writes them in
 * English, German, French, Spanish, Italian, Dutch and Portuguese (its `#N/A` and `#NV`, `#N/D`, `#N/B` are null
 * words). A CSV cell holding one exactly is null and counted, as an XLSX error cell is (`unreadable_cells`).
 */
export const ERROR_VALUES = [
  '#NULL!',
  '#DIV/0!',
  '#VALUE!',
  '#REF!',
  '#NAME?',
  '#NUM!',
  '#GETTING_DATA',
  '#SPILL!',
  '#CALC!',
  '#FIELD!',
  '#BLOCKED!',
  '#CONNECT!',
  '#BUSY!',
  '#UNKNOWN!',
  '#WERT!',
  '#BEZUG!',
  '#ZAHL!',
  '#VALEUR!',
  '#NOM?',
  '#NOMBRE!',
  '#NUL!',
  '#¡DIV/0!',
  '#¡VALOR!',
  '#¡REF!',
  '#¿NOMBRE?',
  '#¡NUM!',
  '#¡NULO!',
  '#VALORE!',
  '#RIF!',
  '#NOME?',
  '#NULLO!',
  '#DEEL/0!',
  '#WAARDE!',
  '#VERW!',
  '#NAAM?',
  '#GETAL!',
  '#LEEG!',
  '#VALOR!',
  '#NÚM!',
  '#NULO!',
] as const;

/** SQL: the cell is one of ERROR_VALUES (only a cell starting with `#` is compared with them) */
export function errorValueSql(v: string): string {
  return `(ascii(${v}) = 35 AND ${v} IN (${ERROR_VALUES.map(literal).join(', ')}))`;
}

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

const INTEGER_RE = `'[+-]?[0-9]+ *'`;
const DECIMAL_RE = `'[+-]?([0-9]+\\.[0-9]*|\\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)? *'`;
const DATE_RE = `'[0-9]{4}-[0-9]{2}-[0-9]{2} *'`;
// hours 00–23, minutes and seconds 00–59 (DuckDB's casts also take 24:00:00, as the next day), an offset
// from −18:00 to +18:00 (DuckDB's TIMESTAMPTZ cast takes any two digits, +25:00 or +02:60 too)
const DATETIME_RE = `'[0-9]{4}-[0-9]{2}-[0-9]{2}[T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]+)?)?(Z|[+-]((0[0-9]|1[0-7]):?[0-5][0-9]|18:?00))? *'`;

/** null words with spaces around them (any case), and a cell of spaces only */
const NULL_RE = `'(?i) *(${NULL_STRINGS.filter((w) => w !== '').join('|')})? *'`;
const BOOLEAN_RE = `'(?i) *(true|false|yes|no) *'`;
/**
 * What a cell's first character (code point 0–127; 0 for the empty cell) says about the classes it can be in:
 * 0 text only; 1 a number, a date or a datetime (a digit, + - or .); 2 null only (`#`, and the empty cell);
 * 3 boolean only (t f y, any case); 4 null or boolean (n, any case: null, n/a, na, nan, no); 5 a space (null,
 * boolean, or a number after the spaces). Any other character: text.
 */
function firstCharTable(): number[] {
  const table = new Array<number>(128).fill(0);
  for (const c of '0123456789+-.') table[c.charCodeAt(0)] = 1;
  table[0] = 2;
  table['#'.charCodeAt(0)] = 2;
  for (const c of 'tfyTFY') table[c.charCodeAt(0)] = 3;
  for (const c of 'nN') table[c.charCodeAt(0)] = 4;
  table[' '.charCodeAt(0)] = 5;
  return table;
}

/**
 * The macros the SQL below calls (created once per connection by openEngine). The first character of a
 * cell picks, through one lookup in a constant table, the only patterns that can match it, so most cells of
 * a text column cost one lookup and no pattern.
 */
export async function installMacros(conn: { run(sql: string): Promise<unknown> }): Promise<void> {
  // the first character's code (firstCharTable), shared by the null test and the class test
  await conn.run(`CREATE OR REPLACE TEMP MACRO ds_first(v) AS (
    list_extract([${firstCharTable().join(', ')}]::UTINYINT[], ascii(v) + 1))`);
  // a null word or a cell of spaces starts with '' (the empty cell), #, n or N, or a space: codes 2, 4, 5
  await conn.run(`CREATE OR REPLACE TEMP MACRO ds_is_null(v) AS (
    v IS NULL OR (ds_first(v) IN (2, 4, 5) AND regexp_full_match(v, ${NULL_RE})))`);
  // a datetime's trimmed text with ':00' seconds when it has none: DuckDB's casts read `HH:MM` alone but
  // refuse it followed by Z, an offset or spaces (the 16 characters `YYYY-MM-DD HH:MM`, then no ':')
  await conn.run(`CREATE OR REPLACE TEMP MACRO ds_seconds(t) AS (
    CASE WHEN length(t) <= 16 OR substr(t, 17, 1) = ':' THEN t ELSE concat(left(t, 16), ':00', substr(t, 17)) END)`);
  // numbers, dates and datetimes; v starts with a digit, a sign or a point (trailing spaces allowed)
  // a value with '-' at positions 5 and 8 (YYYY-MM-…) can only be a date or a datetime (an integer has no
  // '-' after its first character, a decimal at most one, in its exponent): its patterns are tried first,
  // which spares every cell of a date column the two number patterns. Every date and datetime has those '-'
  // (their patterns start with YYYY-MM-), so no other value needs their patterns; a date is 10 characters
  // before any trailing spaces, a datetime more. A number's cast comes before its pattern (the cast fails
  // fast on text such as phone numbers or addresses)
  await conn.run(`CREATE OR REPLACE TEMP MACRO ds_class_number(v) AS (
    CASE
      WHEN v LIKE '____-__-%' THEN
        CASE
          WHEN regexp_full_match(v, ${DATE_RE}) AND TRY_CAST(v AS DATE) IS NOT NULL THEN 4
          WHEN regexp_full_match(v, ${DATETIME_RE})
            AND (TRY_CAST(v AS TIMESTAMP) IS NOT NULL OR TRY_CAST(ds_seconds(trim(v)) AS TIMESTAMPTZ) IS NOT NULL) THEN 5
          ELSE 6
        END
      WHEN TRY_CAST(v AS BIGINT) IS NOT NULL AND regexp_full_match(v, ${INTEGER_RE}) THEN 1
      WHEN isfinite(TRY_CAST(v AS DOUBLE)) AND regexp_full_match(v, ${DECIMAL_RE}) THEN 2
      ELSE 6
    END)`);
  // a datetime as UTC: an offset is applied, a time without one (or with Z) is taken as UTC. DuckDB's
  // TIMESTAMP cast reads Z as UTC but drops any other offset, so a value with one goes through TIMESTAMPTZ.
  // An offset starts with + or with a '-' after the date: only such values try the offset's pattern. The
  // cast refuses a date with spaces after it: only then is the value trimmed (a copy of every value costs),
  // and given seconds when it has none (ds_seconds)
  await conn.run(`CREATE OR REPLACE TEMP MACRO ds_datetime(v) AS (
    CASE
      WHEN (contains(v, '+') OR v LIKE '__________%-%')
        AND regexp_matches(v, '[0-9][+-][0-9]{2}:?[0-9]{2} *$') THEN timezone('UTC', TRY_CAST(ds_seconds(trim(v)) AS TIMESTAMPTZ))
      ELSE coalesce(TRY_CAST(v AS TIMESTAMP), TRY_CAST(ds_seconds(trim(v)) AS TIMESTAMP))
    END)`);
  // a NULL cell has no first character: the lookup gives NULL, as it does past the table (code points
  // from 128: text)
  await conn.run(`CREATE OR REPLACE TEMP MACRO ds_class(v) AS (
    CASE ds_first(v)
      WHEN 0 THEN 6
      WHEN 1 THEN ds_class_number(v)
      WHEN 2 THEN CASE WHEN regexp_full_match(v, ${NULL_RE}) THEN 0 ELSE 6 END
      WHEN 3 THEN CASE WHEN regexp_full_match(v, ${BOOLEAN_RE}) THEN 3 ELSE 6 END
      WHEN 4 THEN
        CASE WHEN regexp_full_match(v, ${NULL_RE}) THEN 0 WHEN regexp_full_match(v, ${BOOLEAN_RE}) THEN 3 ELSE 6 END
      WHEN 5 THEN
        CASE
          WHEN regexp_full_match(v, ${NULL_RE}) THEN 0
          WHEN regexp_full_match(v, ${BOOLEAN_RE}) THEN 3
          WHEN (ascii(ltrim(v)) BETWEEN 48 AND 57) OR ascii(ltrim(v)) IN (43, 45, 46) THEN ds_class_number(ltrim(v))
          ELSE 6
        END
      ELSE CASE WHEN v IS NULL THEN 0 ELSE 6 END
    END)`);
}

/**
 * How the numbers and dates of a CSV/TSV's cells are written (the header comment), each null when read as written:
 * - numbers: `decimal-comma` (`1.234,5`) with a semicolon, as spreadsheet programs write CSV where the comma is
 *   the decimal mark; `grouped` with a comma when a quoted cell may start with a number whose thousands are
 *   grouped by commas (`"1,234.5"`; only a quoted cell can hold a comma: csvText.ts `DownloadFacts.groupedNumbers`
 *   says whether a quote is followed by one to three digits and a comma anywhere in the file);
 * - dates: `day-first` (`15.03.2024`, `15/3/2024`) with a semicolon; with a comma, dates written with slashes in
 *   the order the file's dates show (csvText.ts `DownloadFacts.slashDates`: `3/15/2024` somewhere and no
 *   `15/3/2024` is `month-first`, as Excel writes dates in the United States; the other way `day-first`, as in
 *   the United Kingdom; neither when no date tells);
 * - with a tab, numbers by the cells of the file's first 64 KB (`tabNotation`: a tab-separated file may come from
 *   either side): European ones read their dates day-first, the others as the file's dates show, as with a comma.
 * Null when both are read as written: the cells are read at no cost.
 */
export interface CellNotation {
  numbers: 'decimal-comma' | 'grouped' | null;
  dates: SlashDateOrder | null;
  /** dates written with slashes year first (`2024/3/15`): only when the file has one (`DownloadFacts.yearFirstDates`) */
  yearFirst: boolean;
  /**
   * a number with a currency sign or a percent sign is that number (`$1,234.50`, `1.234,50 €`; `12,5 %` is 0.125):
   * `unitsWhen`, in the decimal mark of `numbers`; only when the file has such a sign next to a digit
   * (csvText.ts `DownloadFacts.units`)
   */
  units: boolean;
  /**
   * a spreadsheet's error value (`#DIV/0!`: ERROR_VALUES) is null, when the file has one (csvText.ts
   * `DownloadFacts.errorValues`); a loaded table nulls them after its load instead, counting them (load.ts)
   */
  errors: boolean;
}

export function cellNotation(
  delimiter: string,
  facts: Pick<
    DownloadFacts,
    'groupedNumbers' | 'head' | 'slashDates' | 'yearFirstDates' | 'units' | 'errorValues'
  >,
): CellNotation | null {
  const { units, yearFirstDates: yearFirst, errorValues: errors } = facts;
  const european: CellNotation = { numbers: 'decimal-comma', dates: 'day-first', yearFirst, units, errors };
  let notation: CellNotation | null = null;
  if (delimiter === ';') notation = european;
  else if (delimiter === ',') {
    notation = {
      numbers: facts.groupedNumbers ? 'grouped' : null,
      dates: facts.slashDates,
      yearFirst,
      units,
      errors,
    };
  } else if (delimiter === '\t') {
    const numbers = tabNotation(facts.head);
    notation =
      numbers === 'european' ? european : { numbers, dates: facts.slashDates, yearFirst, units, errors };
  }
  return notation && rewrites(notation) ? notation : null;
}

/** whether a notation rewrites anything */
function rewrites(n: CellNotation): boolean {
  return n.numbers !== null || n.dates !== null || n.yearFirst || n.units || n.errors;
}

/** `notation` without nulling error values (a loaded table nulls and counts them after its load); null if nothing is left */
export function withoutErrors(notation: CellNotation | null): CellNotation | null {
  if (!notation?.errors) return notation;
  const rest = { ...notation, errors: false };
  return rewrites(rest) ? rest : null;
}

/** cells only European notation writes: a decimal comma not followed by exactly three digits, `1.234,5`, `15.03.2024` */
const EUROPEAN_ONLY = [
  /^ *[+-]?[0-9]+,([0-9]{1,2}|[0-9]{4,}) *$/,
  /^ *[+-]?[0-9]{1,3}(\.[0-9]{3})+,[0-9]+ *$/,
  /^ *[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{4}( |$)/,
];
/** cells only the other side writes: `1,234.5` (commas grouping, a decimal point), `03/15/2024` (month first) */
const GROUPED_ONLY = [
  /^ *[+-]?[0-9]{1,3}(,[0-9]{3})+\.[0-9]+ *$/,
  /^ *[0-9]{1,2}\/(1[3-9]|2[0-9]|3[01])\/[0-9]{4}( |$)/,
];

/**
 * A tab-separated file's notation of numbers, judged on the cells of its first 64 KB: `european` when some cell can
 * only be written so and none only the other way, `grouped` the other way round, else null (as written). `1,234`
 * alone says nothing (1.234 or 1234). The whole file is then read one way, so a version is consistent with itself.
 */
export function tabNotation(head: string): 'european' | 'grouped' | null {
  let european = false;
  let grouped = false;
  for (const line of head.split(/\r\n|\n|\r/)) {
    for (const cell of line.split('\t')) {
      if (cell.length === 0 || cell.length > 40) continue;
      if (!european && EUROPEAN_ONLY.some((re) => re.test(cell))) european = true;
      if (!grouped && GROUPED_ONLY.some((re) => re.test(cell))) grouped = true;
    }
    if (european && grouped) return null;
  }
  return european ? 'european' : grouped ? 'grouped' : null;
}

/**
 * SQL: the cell as the type rules read it in `notation`: its number (`decimalCommaWhen`, `groupedWhen`), else its
 * date (`slashDateWhen`) rewritten; any other cell as it is.
 */
export function notationCellSql(v: string, notation: CellNotation): string {
  const whens = [
    notation.errors ? `WHEN ${errorValueSql(v)} THEN NULL` : '',
    notation.numbers === 'decimal-comma' ? decimalCommaWhen(v) : '',
    notation.numbers === 'grouped' ? groupedWhen(v) : '',
    notation.units ? unitsWhen(v, notation.numbers === 'decimal-comma') : '',
    notation.dates ? slashDateWhen(v, notation.dates) : '',
    notation.yearFirst ? slashDateWhen(v, 'year-first') : '',
  ];
  return `CASE ${whens.filter((w) => w !== '').join('\n    ')} ELSE ${v} END`;
}

/** digits whose thousands are grouped by commas (at least one group), then a decimal point and digits or not */
const GROUPED_DIGITS = `[0-9]{1,3}(,[0-9]{3})+(\\.[0-9]+)?`;
/** a number with a decimal point, its thousands grouped by commas or not */
const POINT_NUMBER = `([0-9]+(\\.[0-9]+)?|${GROUPED_DIGITS})`;
/** digits, or digits whose thousands are grouped by points (at least one group) */
const COMMA_INTEGER = `([0-9]+|[0-9]{1,3}(\\.[0-9]{3})+)`;
/**
 * the spaces thousands are grouped by where the comma is the decimal mark: a no-break space or a narrow no-break
 * space, what French, Nordic and Central European spreadsheet programs write for a number formatted with a
 * separator. A plain space is what people type, in phone numbers too (`612 345 678`): no group.
 */
const GROUP_SPACES = '[\u00a0\u202f]';
/**
 * digits whose thousands are grouped by spaces (at least one group), the first not 0 (`06 123 456` is no number
 * but a phone's, as written)
 */
const SPACE_GROUPED_INTEGER = `[1-9][0-9]{0,2}(${GROUP_SPACES}[0-9]{3})+`;
/** a number with a decimal comma, its thousands grouped by points, by spaces or not at all */
const COMMA_NUMBER = `(${COMMA_INTEGER}|${SPACE_GROUPED_INTEGER})(,[0-9]+)?`;

/** a number whose thousands are grouped by commas (at least one group), spaces around it allowed */
const GROUPED_RE = `' *[+-]?${GROUPED_DIGITS} *'`;

/** SQL: a number whose thousands are grouped by commas without them (`1,234.5` is `1234.5`) */
function groupedWhen(v: string): string {
  return `WHEN contains(${v}, ',') AND regexp_full_match(${v}, ${GROUPED_RE}) THEN replace(${v}, ',', '')`;
}

/** a number with a decimal comma, spaces around it allowed, thousands grouped by points before the comma */
const DECIMAL_COMMA_RE = `' *[+-]?${COMMA_INTEGER},[0-9]+ *'`;

/** the currency signs a number may carry (`DownloadFacts.units` looks for the same) */
export const CURRENCY_SIGNS = ['$', '€', '£', '¥'] as const;
const CURRENCY = `[${CURRENCY_SIGNS.map((c) => (c === '$' ? '\\$' : c)).join('')}]`;
/**
 * a number with a currency sign before it (a minus or plus before the sign or after it: `-$5`, `$ -5`) or after
 * it (`-5 €`), or with a percent sign after it; one space between allowed, spaces around it allowed
 */
const unitsRe = (number: string, marked: string) =>
  `' *(([+-]?${CURRENCY} ?|${CURRENCY} ?[+-]?)${number}|[+-]?${number} ?(${CURRENCY}|%)|${accountingRe(number, marked)}) *'`;
/**
 * an accounting negative: a number in parentheses, with a currency sign inside them or before them (`($1,234.50)`,
 * `$(1,234.50)`, `(1.234,50 €)`), with a percent sign (`(5%)`), or without any if its decimals or its groups
 * show it is an amount (`(1,234.50)`, `(1,234)`, `(0.5)` — `(1)` is a list's item, as written)
 */
const accountingRe = (number: string, marked: string) =>
  `${CURRENCY} ?\\( *${number} *\\)|\\( *(${CURRENCY} ?${number}|${number} ?(${CURRENCY}|%)|${marked}) *\\)`;
/** a number with a decimal point and decimals, or with its thousands grouped by commas */
const MARKED_POINT_NUMBER = `([0-9]+\\.[0-9]+|${GROUPED_DIGITS})`;
/** a number with a decimal comma and decimals, or with its thousands grouped by points or spaces */
const MARKED_COMMA_NUMBER = `([0-9]+,[0-9]+|([0-9]{1,3}(\\.[0-9]{3})+|${SPACE_GROUPED_INTEGER})(,[0-9]+)?)`;

/**
 * SQL: a number with a currency sign is the number (`$1,234.50` is `1234.50`, `-1.234,50 €` with a decimal comma
 * `-1234.50`), with a percent sign the number divided by 100 as a spreadsheet program holds it (`12,5 %` is
 * `0.125`; rounded to 15 decimals, a double's precision); an accounting negative in parentheses is the negative
 * number (`($1,234.50)` is `-1234.50`). The decimal mark is the file's (`decimalComma`), and
 * the thousands are grouped by the other mark or not at all. Only cells holding such a sign try the pattern.
 */
function unitsWhen(v: string, decimalComma: boolean): string {
  const digits = `regexp_replace(${v}, '[^0-9.,]', '', 'g')`;
  const number = decimalComma
    ? `replace(replace(${digits}, '.', ''), ',', '.')`
    : `replace(${digits}, ',', '')`;
  const signed = `CASE WHEN contains(${v}, '-') OR contains(${v}, '(') THEN '-' ELSE '' END || ${number}`;
  const signs = ['%', '(', ...CURRENCY_SIGNS].map((c) => `contains(${v}, '${c}')`).join(' OR ');
  const re = decimalComma
    ? unitsRe(COMMA_NUMBER, MARKED_COMMA_NUMBER)
    : unitsRe(POINT_NUMBER, MARKED_POINT_NUMBER);
  return `WHEN (${signs}) AND regexp_full_match(${v}, ${re})
      THEN CASE WHEN contains(${v}, '%') THEN (round(TRY_CAST(${signed} AS DOUBLE) / 100, 15))::VARCHAR
        ELSE ${signed} END`;
}

/**
 * a number whose thousands are grouped by spaces, with a decimal comma or none, a minus or no sign (`+33 612 345 678`
 * is a phone's); spaces around it allowed
 */
const SPACE_GROUPED_RE = `' *-?${SPACE_GROUPED_INTEGER}(,[0-9]+)? *'`;

/**
 * SQL: a number with a decimal comma gets a decimal point (`1.234,5` is `1234.5`; spaces around it kept); a number
 * whose thousands are grouped by no-break spaces loses them (`1 234 567,5` is `1234567.5`, `1 234` is `1234`;
 * spaces around it kept). Only cells holding a comma, or a space of GROUP_SPACES, try the patterns.
 */
function decimalCommaWhen(v: string): string {
  const spaces = ['\u00a0', '\u202f'].map((c) => `contains(${v}, '${c}')`).join(' OR ');
  return `WHEN contains(${v}, ',') AND regexp_full_match(${v}, ${DECIMAL_COMMA_RE})
      THEN replace(replace(${v}, '.', ''), ',', '.')
    WHEN (${spaces}) AND regexp_full_match(${v}, ${SPACE_GROUPED_RE})
      THEN replace(regexp_replace(${v}, ${literal(GROUP_SPACES)}, '', 'g'), ',', '.')`;
}

/** the orders of a date's parts the cells may be written in (`slashDateWhen`) */
type DateOrder = SlashDateOrder | 'year-first';

/** a time of day after a date and spaces: `H:MM[:SS[.f]]` (at most 6 decimals), then optionally `AM`/`PM` */
const TIME_RE = `( +[0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?( *[AaPp][Mm])?)?`;
/**
 * a date in either order, `D.M.YYYY` or `D/M/YYYY` (one or two digits for the day and the month, four for the
 * year; points only day-first), optionally with its time (TIME_RE); spaces around it allowed
 */
const SLASH_DATE_RE: Record<DateOrder, string> = {
  'day-first': `' *[0-9]{1,2}[./][0-9]{1,2}[./][0-9]{4}${TIME_RE} *'`,
  'month-first': `' *[0-9]{1,2}/[0-9]{1,2}/[0-9]{4}${TIME_RE} *'`,
  'year-first': `' *[0-9]{4}/[0-9]{1,2}/[0-9]{1,2}${TIME_RE} *'`,
};
/** DuckDB's `strptime` formats of each order's dates (its %d, %m, %H and %I take one digit too) */
const DATE_FORMATS: Record<DateOrder, string[]> = {
  'day-first': ['%d.%m.%Y', '%d/%m/%Y'],
  'month-first': ['%m/%d/%Y'],
  'year-first': ['%Y/%m/%d'],
};
const TIME_FORMATS = ['%H:%M', '%H:%M:%S', '%H:%M:%S.%f', '%I:%M %p', '%I:%M:%S %p', '%I:%M:%S.%f %p'];
const formatList = (formats: string[]) => `[${formats.map((f) => `'${f}'`).join(', ')}]`;

/**
 * SQL: a date in `order` of a real calendar day is `YYYY-MM-DD`, with its time `YYYY-MM-DD HH:MM:SS[.f]`
 * (`5.3.2024 9:05` day-first is `2024-03-05 09:05:00`, `3/15/2024 2:30 PM` month-first `2024-03-15 14:30:00`;
 * spaces around it dropped, and before `AM`/`PM`). Both separators must be the same; a day or a time that does
 * not exist (`31.02.2024`, `24:00`, `13:00 PM`) stays as written. Only cells starting with a digit or a space and
 * holding a slash (or a point, day-first) try the pattern (measured: the cast formats cost less than taking the
 * pattern's groups apart).
 */
function slashDateWhen(v: string, order: DateOrder): string {
  const dates = DATE_FORMATS[order];
  const datetimes = dates.flatMap((date) => TIME_FORMATS.map((time) => `${date} ${time}`));
  const separators =
    order === 'day-first' ? `(contains(${v}, '.') OR contains(${v}, '/'))` : `contains(${v}, '/')`;
  return `WHEN (ascii(${v}) BETWEEN 48 AND 57 OR ascii(${v}) = 32) AND ${separators}
      AND regexp_full_match(${v}, ${SLASH_DATE_RE[order]})
      THEN coalesce(CASE WHEN contains(${v}, ':')
        THEN try_strptime(regexp_replace(trim(${v}), ' *([AaPp][Mm])$', ' \\1'), ${formatList(datetimes)})::VARCHAR
        ELSE try_strptime(trim(${v}), ${formatList(dates)})::DATE::VARCHAR END, ${v})`;
}

/** SQL: true when the cell counts as null. */
export function isNullSql(ident: string): string {
  return `ds_is_null(${ident})`;
}

/**
 * SQL: the typed value of a cell known to be of `type` or null (the profile's own columns), without the
 * null test and trim of typedSql: DuckDB's casts ignore spaces around the text, and every null text (an
 * empty cell, spaces, a null word) casts to NULL — but `nan`, which casts to NaN: only finite doubles count.
 */
export function knownTypedSql(ident: string, type: InferredType): string {
  switch (type) {
    case 'integer':
      return `TRY_CAST(${ident} AS BIGINT)`;
    case 'decimal':
      return `CASE WHEN isfinite(TRY_CAST(${ident} AS DOUBLE)) THEN TRY_CAST(${ident} AS DOUBLE) END`;
    case 'date':
      return `TRY_CAST(${ident} AS DATE)`;
    case 'datetime':
      return `ds_datetime(${ident})`;
    default:
      return typedSql(ident, type);
  }
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
  const c = classSql(ident);
  const v = `trim(${ident})`;
  switch (type) {
    case 'integer':
      return `CASE WHEN ${c} = 1 THEN TRY_CAST(${v} AS BIGINT) END`;
    case 'decimal':
      return `CASE WHEN ${c} IN (1, 2) THEN TRY_CAST(${v} AS DOUBLE) END`;
    case 'boolean':
      return `CASE WHEN lower(${v}) IN ('true', 'yes') THEN true WHEN lower(${v}) IN ('false', 'no') THEN false END`;
    case 'date':
      return `CASE WHEN ${c} = 4 THEN TRY_CAST(${v} AS DATE) END`;
    case 'datetime':
      return `CASE WHEN ${c} IN (4, 5) THEN ds_datetime(${ident}) END`;
    case 'text':
      return `CASE WHEN NOT ${isNullSql(ident)} THEN ${ident} END`;
  }
}

/** A SQL string literal. */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
