/**
 * Which XLSX cells are dates, and which date a serial day number is: one rule for the preview and the report
 * engine's loader (both through ./xlsxRead.ts), so that both read the same cells as dates.
 */

/**
 * The built-in number formats (a cell style's `numFmtId` without a `<numFmt>` of that id) that show dates or
 * times (ECMA-376 Part 1, 18.8.30): 14–22 and 45–47 in every locale, and those Excel writes from East Asian
 * (27–36, 50–58) and Thai (71–81) locales, which a workbook made there references without defining them.
 */
const BUILTIN_DATE_FORMATS: ReadonlySet<number> = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54,
  55, 56, 57, 58, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81,
]);

/**
 * What a date or time format shows (`DateStyle`): `date` a date, or a date and time; `time` a time of day
 * alone (`h:mm`, `mm:ss`, `h:mm AM/PM`); `duration` elapsed time (`[h]:mm:ss`, `[mm]:ss`: hours past 24).
 */
export type DateStyle = 'date' | 'time' | 'duration';

/** Built-in ids (see BUILTIN_DATE_FORMATS) of a time of day alone: 18–21, 45, 47; East Asian 32–35; Thai 75, 76, 78, 80. */
const BUILTIN_TIME_FORMATS: ReadonlySet<number> = new Set([
  18, 19, 20, 21, 32, 33, 34, 35, 45, 47, 75, 76, 78, 80,
]);
/** Built-in ids of elapsed time: 46 `[h]:mm:ss`, Thai 79 `[ช]:นน:ทท`. */
const BUILTIN_DURATION_FORMATS: ReadonlySet<number> = new Set([46, 79]);

/** What a built-in format id (one without a `<numFmt>` of that id in the workbook) shows; null: no date. */
export function builtinDateStyle(id: number): DateStyle | null {
  if (!BUILTIN_DATE_FORMATS.has(id)) return null;
  if (BUILTIN_DURATION_FORMATS.has(id)) return 'duration';
  return BUILTIN_TIME_FORMATS.has(id) ? 'time' : 'date';
}

/**
 * What a number format shows, by its codes: null when no date or time. A date or time format holds a year,
 * month, day, hour, second or Buddhist-year code (y, m, d, h, s, b, in either case: Excel reads `YYYY-MM-DD` as
 * `yyyy-mm-dd`, and LibreOffice writes its codes in upper case) outside what a format shows as written: quoted
 * text (`0" days"`), brackets (`[Red]`, `[$-409]`, `[$€-407]`), an escaped character (`\h`), and the character
 * after `_` (a space its width) or `*` (repeated). Every other letter of a format is a code of its own (`E+` of
 * a scientific format, `General`), none of them a date's. An elapsed-time bracket (`[h]`, `[mm]`, `[ss]`) makes
 * it a duration; hours or seconds without a year, day, Buddhist year or era (y, d, b, e, g) a time of day (its
 * `m` are minutes); anything else a date. Linear in the code, whatever it holds (a bracket is `[` up to the
 * next `[` or `]`).
 */
export function dateFormatStyle(format: string | undefined): DateStyle | null {
  if (format === undefined) return null;
  const shown = format.replace(/"[^"]*"/g, '').replace(/\\[\s\S]|[_*][\s\S]/g, '');
  const codes = shown.replace(/\[[^[\]]*]/g, '');
  const elapsed = /\[(?:h+|m+|s+)]/i.test(shown);
  if (!elapsed && !/[ymdhsb]/i.test(codes)) return null;
  if (/[ydbeg]/i.test(codes)) return 'date';
  if (elapsed) return 'duration';
  return /[hs]/i.test(codes) ? 'time' : 'date';
}

/**
 * A serial day number as a date (UTC): days since 1899-12-30, or since 1904-01-01 in a 1904 workbook; 25569
 * of them before 1970-01-01. An Invalid Date beyond the dates JavaScript can hold.
 */
export function serialDate(serial: number, date1904: boolean): Date {
  return new Date(Math.round((serial - 25569 + (date1904 ? 1462 : 0)) * 86_400_000));
}

/**
 * The value of an ISO 8601 date cell (`t="d"`, `<v>2024-01-02T10:00:00</v>`): a date and time without a zone
 * is read as UTC, as a serial day number is (a spreadsheet's dates have no zone; `new Date` would read them in
 * the process's own zone). An Invalid Date when the text is no date.
 */
export function isoCellDate(text: string): Date {
  const t = text.trim();
  // a date alone is read as UTC already; a time after it without Z or an offset gets Z
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d/.test(t) || /(Z|[+-]\d{2}(:?\d{2})?)$/i.test(t)) return new Date(t);
  return new Date(`${t.slice(0, 10)}T${t.slice(11)}Z`);
}

/** milliseconds in a day */
export const DAY_MS = 86_400_000;

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** `HH:MM:SS`, and `.fff` when the milliseconds are not 0; hours as many as there are (a duration's may pass 24). */
export function clockText(ms: number): string {
  const hms = `${two(Math.floor(ms / 3_600_000))}:${two(Math.floor(ms / 60_000) % 60)}:${two(Math.floor(ms / 1000) % 60)}`;
  const fraction = ms % 1000;
  return fraction === 0 ? hms : `${hms}.${String(fraction).padStart(3, '0')}`;
}

/**
 * The text of a number shown by a time or duration format, as the spreadsheet shows it (to the millisecond):
 * a time of day (`time`) is `HH:MM:SS[.fff]` when the serial is within one day (0 ≤ serial < 1, as a time
 * typed alone is stored); a duration is its hours, minutes and seconds, `-` before it when negative
 * (`[h]:mm` of 1.5 is `36:00:00`). Null otherwise: a date format's serial, and a time format's on a whole date
 * and time, is a date (`serialDate`).
 */
export function serialClockText(serial: number, style: DateStyle): string | null {
  if (style === 'date') return null;
  const ms = Math.round(Math.abs(serial) * DAY_MS);
  if (!Number.isFinite(ms) || ms > Number.MAX_SAFE_INTEGER) return null;
  if (style === 'duration') return (serial < 0 && ms > 0 ? '-' : '') + clockText(ms);
  if (style === 'time' && serial >= 0 && ms < DAY_MS) return clockText(ms);
  return null;
}
