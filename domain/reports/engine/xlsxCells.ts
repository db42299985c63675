/** ExcelJS cell values as the text a person sees (used by the XLSX worker thread, ./xlsxWorker.ts). */
/** A date without a time of day as `YYYY-MM-DD`; otherwise `YYYY-MM-DD HH:MM:SS[.fff]` (UTC, as stored). */
export function dateText(value: Date): string {
  const iso = value.toISOString();
  if (iso.length === 24) {
    // YYYY-MM-DDTHH:MM:SS.fffZ (years 0–9999): slices, no pattern
    if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
    return iso.endsWith('.000Z')
      ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}`
      : `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
  }
  if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, iso.length - 14);
  return iso
    .replace('T', ' ')
    .replace(/\.000Z$/, '')
    .replace(/Z$/, '');
}

/** Returned by `fastCellText` for an unreadable cell (an error value, a formula without a cached result). */
export const UNREADABLE = Symbol('unreadable');

/** cellText without an object per cell: the text, null (empty) or UNREADABLE. */
export function fastCellText(value: unknown): string | null | typeof UNREADABLE {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : UNREADABLE;
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? UNREADABLE : dateText(value);
  const { text, unreadable } = cellText(value);
  return unreadable ? UNREADABLE : text;
}

/** An ExcelJS cell value as the text a person sees; dates as ISO dates; undefined for an empty cell. */
export function cellText(value: unknown): { text: string | null; unreadable: boolean } {
  if (value === null || value === undefined) return { text: null, unreadable: false };
  if (typeof value === 'string') return { text: value, unreadable: false };
  if (typeof value === 'number') {
    return Number.isFinite(value)
      ? { text: String(value), unreadable: false }
      : { text: null, unreadable: true };
  }
  if (typeof value === 'boolean') return { text: value ? 'true' : 'false', unreadable: false };
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return { text: null, unreadable: true };
    return { text: dateText(value), unreadable: false };
  }
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if ('error' in v) return { text: null, unreadable: true };
    if ('result' in v) return cellText(v.result); // a formula: its cached result
    if ('formula' in v || 'sharedFormula' in v) return { text: null, unreadable: true }; // no cached result
    if (Array.isArray(v.richText)) {
      return { text: (v.richText as Array<{ text: string }>).map((r) => r.text).join(''), unreadable: false };
    }
    if ('text' in v) return cellText(v.text); // a hyperlink
  }
  return { text: null, unreadable: true };
}
