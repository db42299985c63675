/**
 * Which XLSX cells are dates, and which date a serial day number is: one rule for the preview and the report
 * engine's loader (both through ./xlsxRead.ts), so that both read the same cells as dates.
 */

/**
 * The built-in number formats (a cell style's `numFmtId` without a `<numFmt>` of that id) that show dates or
 * times (ECMA-376 Part 1, 18.8.30): 14–22 and 45–47 in every locale, and those Excel writes from East Asian
 * (27–36, 50–58) and Thai (71–81) locales, which a workbook made there references without defining them.
 */
export const BUILTIN_DATE_FORMATS: ReadonlySet<number> = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54,
  55, 56, 57, 58, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81,
]);

/**
 * A date number format: a year, month, day, hour, second or Buddhist-year code (y, m, d, h, s, b, in either
 * case: Excel reads `YYYY-MM-DD` as `yyyy-mm-dd`, and LibreOffice writes its codes in upper case) outside what
 * a format shows as written: quoted text (`0" days"`), brackets (`[Red]`, `[$-409]`, `[$€-407]`), an escaped
 * character (`\h`), and the character after `_` (a space its width) or `*` (repeated). Every other letter of a
 * format is a code of its own (`E+` of a scientific format, `General`), none of them a date's. Linear in the
 * code, whatever it holds (a bracket is `[` up to the next `[` or `]`).
 */
export function isDateFormat(format: string | undefined): boolean {
  if (format === undefined) return false;
  const codes = format
    .replace(/"[^"]*"/g, '')
    .replace(/\\[\s\S]|[_*][\s\S]/g, '')
    .replace(/\[[^[\]]*]/g, '');
  return /[ymdhsb]/i.test(codes);
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
