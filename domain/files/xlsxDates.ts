/**
 * Which XLSX cells are dates, and which date a serial day number is: one rule for the preview and the report
 * engine's loader (both through ./xlsxRead.ts), so that both read the same cells as dates. It is ExcelJS's rule
 * (utils.isDateFmt, excelToDate), which the report read by until it read workbooks itself: reports of the
 * same file do not change.
 */

/** The built-in number formats (`numFmtId` without a `<numFmt>`) whose codes in ExcelJS's table are dates. */
export const BUILTIN_DATE_FORMATS: ReadonlySet<number> = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47,
]);

/**
 * A date number format: a year, month, day, hour, second or Buddhist-year code outside quoted text and
 * brackets such as `[Red]`, `[$-409]`, in ExcelJS's letters (lower case, and M), so `YYYY` alone is no date,
 * as the report reads it. A bracket is `[` up to the next `[` or `]` (ExcelJS's runs to the next `]`; they differ
 * only for a `[` inside brackets): linear in the code, whatever it holds.
 */
export function isDateFormat(format: string | undefined): boolean {
  if (format === undefined) return false;
  return /[ymdhMsb]/.test(format.replace(/\[[^[\]]*]/g, '').replace(/"[^"]*"/g, ''));
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
