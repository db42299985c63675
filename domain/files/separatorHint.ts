/**
 * Excel's separator line: a CSV whose first line is `sep=;` (or `sep=,`, `sep=<tab>`) names its delimiter
 * there, and Excel opens it with that delimiter and without that line — the header is the next line, shown as
 * row 1. Tools write it so that a semicolon file opens as a table whatever the reader's regional settings.
 *
 * The upload's sniff takes the delimiter from it (domain/files/sniff.ts) and counts it among the version's
 * lines before the header, which every reader of the version's text — preview, report builds, comparisons —
 * skips (domain/files/tableText.ts), so the header, the rows and their numbers are what a spreadsheet shows. The
 * stored object keeps the uploaded bytes. The line is the file's first, after a byte order mark if there is one,
 * exactly `sep=` (any case) and one character.
 */
export interface SeparatorLine {
  /** the character the line names (any: the sniff refuses one that is not a delimiter of the service) */
  delimiter: string;
  /** the line's length in UTF-16 units of the text, its line break included (the byte order mark is not) */
  length: number;
}

const LINE = /^sep=([^\r\n])(\r\n|\n|\r)/i;

/** The separator line `text` starts with (after an optional U+FEFF), or null. */
export function separatorLine(text: string): SeparatorLine | null {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const match = LINE.exec(body);
  return match ? { delimiter: match[1], length: match[0].length } : null;
}
