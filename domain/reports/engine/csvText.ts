import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { ERROR_VALUES } from './sql';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
/** Written on a blank line, so DuckDB keeps it as a row: a control character the upload never accepts. */
export const BLANK_MARK = '\u0001';
const BLANK_LINE = Buffer.from([0x01, LF]);
const LF_BUF = Buffer.from([LF]);
const CR_BUF = Buffer.from([CR]);
const BOM = [0xef, 0xbb, 0xbf];

const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const QUOTE_IN_QUOTED = 3;

export interface TextFacts {
  /** raw cells of the header (the first non-blank record) */
  header: string[];
  /** records after the header, blank ones in between included, blank ones at the end excluded */
  dataRows: number;
  /**
   * the widest record (header included): the header's fields, a data record's fields up to its last one that
   * holds text — empty cells after it (trailing delimiters) are no cells, as DuckDB's reader drops them
   */
  maxFields: number;
  /** blank lines before the header (the header's row number is this + 1) */
  leadingBlankRows: number;
  /** records (header excluded) with a cell that holds text beyond the header's fields */
  widerRows: number;
  /** ends inside a quoted field */
  unterminatedQuote: boolean;
}

/** Splits one CSV record (no line break outside quotes) into its cells. */
export function splitRecord(text: string, delimiter: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let inQuotes = false;
  let atStart = true;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inQuotes) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else inQuotes = false;
      } else cell += ch;
    } else if (ch === delimiter) {
      cells.push(cell);
      cell = '';
      atStart = true;
      continue;
    } else if (ch === '"' && atStart) {
      inQuotes = true;
    } else if (ch !== '\r' && ch !== '\n') {
      cell += ch;
    }
    atStart = false;
  }
  cells.push(cell);
  return cells;
}

/**
 * One streaming pass over CSV/TSV text that writes the copy DuckDB reads, with the line-ending and blank
 * line rules applied (quote-aware: nothing inside a quoted field is touched):
 * - a UTF-8 byte order mark is dropped;
 * - a bare CR (old Mac line ending) ends a record like LF and CRLF do (written as LF);
 * - a blank line inside the data is written as a one-cell row holding BLANK_MARK, so it keeps its row
 *   number; blank lines before the header and after the last record are not rows.
 * It also counts records and the widest record, so no cell beyond the header's width is dropped.
 */
export async function normalizeText(
  source: Readable,
  destination: string,
  delimiter: string,
  onBytes: (bytes: number) => void,
  signal?: AbortSignal,
): Promise<TextFacts> {
  const delim = delimiter.charCodeAt(0);
  const out = createWriteStream(destination);
  const outDone = once(out, 'finish');
  let outError: Error | undefined;
  out.on('error', (err) => (outError = err));

  let state = FIELD_START;
  let fields = 1;
  let filled = 0; // the last field of the current record that holds text (1-based; 0: none)
  let content = false; // the current record has a byte other than its line ending
  let records = 0; // non-blank records seen (header included)
  let pendingBlank = 0; // blank lines not yet written (they become rows only if a record follows)
  let leadingBlank = 0;
  let maxFields = 0;
  let headerFields = 0;
  let widerRows = 0;
  let dataRows = 0;
  let afterCr = false; // the previous byte was a CR that ended a record (a following LF belongs to it)
  let dropLf = false; // ... and that record was blank, so the LF is not written either
  let heldCr = false; // a chunk ended with a CR of a non-blank record, not yet written
  let header: string[] | undefined;
  let headerBytes: Buffer[] | null = [];
  let bomChecked = false;
  let bytes = 0;

  const endRecord = () => {
    if (!content) {
      if (records === 0) leadingBlank++;
      else pendingBlank++;
    } else {
      const width = records === 0 ? fields : filled;
      if (records === 0) headerFields = fields;
      else {
        dataRows += 1;
        if (filled > headerFields) widerRows++;
      }
      if (width > maxFields) maxFields = width;
      records++;
    }
    fields = 1;
    filled = 0;
    content = false;
    state = FIELD_START;
  };

  for await (const raw of source) {
    if (signal?.aborted) throw signal.reason;
    let chunk = raw as Buffer;
    bytes += chunk.length;
    onBytes(bytes);
    if (!bomChecked) {
      bomChecked = true;
      if (chunk.length >= 3 && chunk[0] === BOM[0] && chunk[1] === BOM[1] && chunk[2] === BOM[2]) {
        chunk = chunk.subarray(3);
      }
    }
    const parts: Buffer[] = [];
    if (heldCr) {
      heldCr = false;
      // the held CR was bare unless this chunk starts with LF
      parts.push(chunk.length > 0 && chunk[0] === LF ? CR_BUF : LF_BUF);
    }
    let segStart = 0;
    let headerStart = 0;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const b = chunk[i];
      if (afterCr) {
        afterCr = false;
        if (b === LF) {
          // CRLF: the record already ended at the CR
          if (dropLf) {
            if (i > segStart) parts.push(chunk.subarray(segStart, i));
            segStart = i + 1;
          }
          dropLf = false;
          continue;
        }
        dropLf = false;
      }
      if (state === QUOTED) {
        if (b === QUOTE) state = QUOTE_IN_QUOTED;
        else filled = fields;
        continue;
      }
      if (state === QUOTE_IN_QUOTED) {
        if (b === QUOTE) {
          // an escaped quote: text
          state = QUOTED;
          filled = fields;
          continue;
        }
        state = UNQUOTED; // the quoted field closed; this byte is read as outside quotes
      }
      if (b === LF || b === CR) {
        if (!content) {
          // a blank line: not written now; it becomes a marked row if a record follows
          if (i > segStart) parts.push(chunk.subarray(segStart, i));
          segStart = i + 1;
          if (records === 0) headerStart = i + 1;
          if (b === CR) {
            afterCr = true;
            dropLf = true;
          }
          endRecord();
          continue;
        }
        if (b === CR) {
          afterCr = true;
          if (i + 1 < n) {
            if (chunk[i + 1] !== LF) {
              // a bare CR: written as LF
              if (i > segStart) parts.push(chunk.subarray(segStart, i));
              parts.push(LF_BUF);
              segStart = i + 1;
            }
          } else {
            // the chunk ends on this CR: the next chunk decides what it was
            if (i > segStart) parts.push(chunk.subarray(segStart, i));
            segStart = i + 1;
            heldCr = true;
          }
        }
        if (headerBytes) {
          headerBytes.push(chunk.subarray(headerStart, i));
          header = splitRecord(Buffer.concat(headerBytes).toString('utf8'), delimiter);
          headerBytes = null;
        }
        endRecord();
        continue;
      }
      if (!content) {
        // a record starts: first write the blank lines it follows as marked rows
        content = true;
        if (pendingBlank > 0) {
          if (i > segStart) parts.push(chunk.subarray(segStart, i));
          segStart = i;
          for (let k = 0; k < pendingBlank; k++) parts.push(BLANK_LINE);
          dataRows += pendingBlank;
          pendingBlank = 0;
        }
      }
      if (b === delim) {
        fields++;
        state = FIELD_START;
      } else if (b === QUOTE && state === FIELD_START) {
        state = QUOTED;
      } else {
        state = UNQUOTED;
        filled = fields;
      }
    }
    // still in the header (a long or multi-line header): keep its bytes so far
    if (headerBytes) headerBytes.push(chunk.subarray(headerStart));
    if (segStart < n) parts.push(chunk.subarray(segStart));
    for (const part of parts) {
      if (outError) throw outError;
      if (!out.write(part)) await once(out, 'drain');
    }
  }
  if (heldCr) out.write(LF_BUF); // a final bare CR
  const unterminatedQuote = state === QUOTED;
  if (content) {
    // a last record without a line ending
    if (headerBytes) {
      header = splitRecord(Buffer.concat(headerBytes).toString('utf8'), delimiter);
      headerBytes = null;
    }
    endRecord();
    out.write(LF_BUF);
  }
  out.end();
  await outDone;
  if (outError) throw outError;
  return {
    header: header ?? [],
    dataRows,
    maxFields,
    leadingBlankRows: leadingBlank,
    widerRows,
    unterminatedQuote,
  };
}

export interface DownloadFacts {
  /**
   * the copy can be read by DuckDB as it is: no byte order mark, no bare CR, no blank line, a first line
   * without quotes ending in LF (the normalising pass is needed otherwise)
   */
  plain: boolean;
  /** the first line (without its line ending) when `plain` */
  headerLine: string;
  /** no quote character anywhere: with `plain`, every line after the first is one record (`LoadedSheet.lines`) */
  quoteFree: boolean;
  /**
   * a quote followed by what starts a number whose thousands are grouped by commas (spaces, a sign, one to three
   * digits, a comma): only then may a quoted cell hold one (sql.ts `cellNotation`); false when quote-free
   */
  groupedNumbers: boolean;
  /** the file's first HEAD_BYTES as text (a tab-separated file's notation is judged on it: sql.ts `cellNotation`) */
  head: string;
  /**
   * the order of the file's dates written with slashes (`D/M/YYYY` or `M/D/YYYY`), as its dates show it anywhere
   * in the file: `day-first` when some date can only be read so (`15/3/2024`) and none only the other way,
   * `month-first` the other way round (`3/15/2024`), null when no date tells or both do (`slashDateOrder`)
   */
  slashDates: SlashDateOrder | null;
  /** some date in the file is written with slashes year first, `2024/3/15` (`scanSlashDates`) */
  yearFirstDates: boolean;
  /**
   * a currency sign ($ € £ ¥) or a percent sign next to a digit somewhere in the file (`unitNextToDigit`): only
   * then are cells read for numbers carrying one (sql.ts `CellNotation.units`)
   */
  units: boolean;
  /** a spreadsheet's error value (sql.ts `ERROR_VALUES`, `#DIV/0!`) somewhere in the file (`errorValueIn`) */
  errorValues: boolean;
}

export type SlashDateOrder = 'day-first' | 'month-first';

/** which orders the dates with slashes seen so far can only be read in (`scanSlashDates`) */
export interface SlashDateEvidence {
  dayFirst: boolean;
  monthFirst: boolean;
  /** some date is written year first, `2024/3/15` (as Excel writes dates in Japan, China, Taiwan) */
  yearFirst: boolean;
}

/** the order the evidence of a whole file says (`DownloadFacts.slashDates`) */
export function slashDateOrder(seen: SlashDateEvidence): SlashDateOrder | null {
  if (seen.dayFirst === seen.monthFirst) return null;
  return seen.dayFirst ? 'day-first' : 'month-first';
}

/** how much of a file's beginning `DownloadFacts.head` keeps */
export const HEAD_BYTES = 64 * 1024;

const SPACE = 0x20;
const COMMA = 0x2c;
const PLUS = 0x2b;
const MINUS = 0x2d;
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

/**
 * Whether a quote in `bytes` is followed by spaces, an optional sign, one to three digits and a comma (true);
 * else the offset of the first quote whose bytes end before that is decided (the next chunk decides it), or −1.
 */
export function quotedGroupedStart(bytes: Buffer): true | number {
  let undecided = -1;
  for (let q = bytes.indexOf(QUOTE); q !== -1; q = bytes.indexOf(QUOTE, q + 1)) {
    let at = q + 1;
    while (at < bytes.length && bytes[at] === SPACE) at++;
    if (at < bytes.length && (bytes[at] === PLUS || bytes[at] === MINUS)) at++;
    let digits = 0;
    while (at < bytes.length && digits < 4 && isDigit(bytes[at])) {
      at++;
      digits++;
    }
    if (at >= bytes.length) {
      if (undecided < 0) undecided = q;
    } else if (digits >= 1 && digits <= 3 && bytes[at] === COMMA) {
      return true;
    }
  }
  return undecided;
}

const SLASH = 0x2f;
const POINT = 0x2e;
/** a date with slashes from its first digit to the byte after its year, and the byte before it: 1+2+1+2+1+4+1 */
const SLASH_DATE_SPAN = 14;

/** the value of the digits of `b` from `from` to `to` (exclusive) */
function digitsValue(b: Buffer, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) v = v * 10 + b[i] - 0x30;
  return v;
}

/**
 * Notes in `seen` which order the dates with slashes in `b` can only be read in: one or two digits, a slash, one
 * or two digits, a slash, four digits (not inside a longer run of digits, points or slashes) — `15/3/2024` only
 * day-first, `3/15/2024` only month-first (a day up to 31), `3/4/2024` either — and whether a date is written
 * year first: four digits, a slash, a month, a slash, a day (`2024/3/15`). Slashes before `from` are not looked
 * at; `atStart`: `b` starts the file; `final`: `b` ends it. A date whose bytes run past the end of `b` is left for
 * the caller's next call (which passes the last SLASH_DATE_SPAN bytes again: `downloadChecked`).
 */
export function scanSlashDates(
  b: Buffer,
  from: number,
  seen: SlashDateEvidence,
  atStart: boolean,
  final: boolean,
): void {
  const separator = (i: number) => (i < 0 ? atStart : !isDigit(b[i]) && b[i] !== SLASH && b[i] !== POINT);
  /** where the one or two digits from `at` end (undefined: none, three or more, or the bytes end first) */
  const twoDigits = (at: number) => {
    let end = at;
    while (end < b.length && end - at <= 2 && isDigit(b[end])) end++;
    return end === at || end - at > 2 || end >= b.length ? undefined : end;
  };
  for (let s = b.indexOf(SLASH, from); s !== -1; s = b.indexOf(SLASH, s + 1)) {
    // one, two or four digits before it, the file's start or a separator before them
    let start = s;
    while (start > 0 && s - start < 5 && isDigit(b[start - 1])) start--;
    const before = s - start;
    if (before === 0 || before === 3 || before > 4 || !separator(start - 1)) continue;
    // one or two digits, a slash
    const m = twoDigits(s + 1);
    if (m === undefined || b[m] !== SLASH) continue;
    const second = digitsValue(b, s + 1, m);
    if (before === 4) {
      // year first: a month, a day, then the file's end or a separator
      let d = m + 1;
      while (d < b.length && d - m <= 3 && isDigit(b[d])) d++;
      if (d === m + 1 || d - m > 3 || (d >= b.length ? !final : !separator(d))) continue;
      const day = digitsValue(b, m + 1, d);
      if (second >= 1 && second <= 12 && day >= 1 && day <= 31) seen.yearFirst = true;
      s = d - 1;
      continue;
    }
    // four digits, then the file's end or a separator
    let y = m + 1;
    while (y < b.length && y - m <= 5 && isDigit(b[y])) y++;
    if (y - m !== 5 || (y >= b.length ? !final : !separator(y))) continue;
    const first = digitsValue(b, start, s);
    if (first >= 13 && first <= 31 && second >= 1 && second <= 12) seen.dayFirst = true;
    else if (second >= 13 && second <= 31 && first >= 1 && first <= 12) seen.monthFirst = true;
    s = y - 1; // its second slash starts no date
  }
}

/** nothing more to learn from a file's dates with slashes */
const settled = (seen: SlashDateEvidence) => seen.dayFirst && seen.monthFirst && seen.yearFirst;

/**
 * the currency signs (sql.ts `CURRENCY_SIGNS`), the percent sign and the parenthesis opening an accounting negative,
 * as UTF-8
 */
const UNIT_SIGNS = ['%', '(', '$', '€', '£', '¥'].map((sign) => Buffer.from(sign));
const PERCENT = 0x25;
const OPENING = 0x28;
/** the most bytes between a sign and the digit `unitNextToDigit` looks for: a space and a sign, or a space */
const UNIT_GAP = 2;
/** how many bytes of a chunk's end `downloadChecked` keeps for the next chunk's `unitNextToDigit`: € and a gap */
const UNIT_SPAN = 3 + UNIT_GAP;

/**
 * Whether `b` holds a currency sign with a digit before it or after it (a space and a minus or plus between
 * allowed: `$ -5`), a percent sign with a digit before it (a space between allowed), or an opening parenthesis
 * with a digit after it: a cell such as `$1,234.50`, `1.234,50 €`, `12,5 %` or `(1,234.50)` may be in the file.
 */
export function unitNextToDigit(b: Buffer): boolean {
  for (const sign of UNIT_SIGNS) {
    for (let at = b.indexOf(sign); at !== -1; at = b.indexOf(sign, at + 1)) {
      let before = at - 1;
      if (before >= 0 && b[before] === SPACE) before--;
      // a percent sign comes after its number, a parenthesis before it
      if (sign[0] !== OPENING && before >= 0 && isDigit(b[before])) return true;
      if (sign[0] === PERCENT) continue;
      let after = at + sign.length;
      if (after < b.length && b[after] === SPACE) after++;
      if (after < b.length && (b[after] === MINUS || b[after] === PLUS)) after++;
      if (after < b.length && isDigit(b[after])) return true;
    }
  }
  return false;
}

const HASH = 0x23;
/** the error values after their `#`, as UTF-8 */
const ERROR_TAILS = ERROR_VALUES.map((e) => Buffer.from(e.slice(1)));
/** how many bytes of a chunk's end `downloadChecked` keeps for the next chunk's `errorValueIn` */
const ERROR_SPAN = Math.max(...ERROR_VALUES.map((e) => Buffer.byteLength(e)));

/**
 * Whether `b` holds one of the spreadsheet error values (sql.ts `ERROR_VALUES`) anywhere: only then are the cells
 * compared with them. A `#` followed by no upper-case letter, `¡` or `¿` (as in `#123`) is passed at once.
 */
export function errorValueIn(b: Buffer): boolean {
  for (let at = b.indexOf(HASH); at !== -1; at = b.indexOf(HASH, at + 1)) {
    const next = b[at + 1];
    if (next === undefined || !((next >= 0x41 && next <= 0x5a) || next === 0xc2)) continue;
    for (const tail of ERROR_TAILS) {
      if (
        at + 1 + tail.length <= b.length &&
        b.compare(tail, 0, tail.length, at + 1, at + 1 + tail.length) === 0
      ) {
        return true;
      }
    }
  }
  return false;
}

/** the last `span` bytes of `tail` followed by `chunk` (a copy: the chunk's buffer may be reused) */
function lastBytes(tail: Buffer, chunk: Buffer, span: number): Buffer {
  return chunk.length >= span
    ? Buffer.from(chunk.subarray(chunk.length - span))
    : Buffer.concat([tail, chunk]).subarray(-span);
}

/**
 * Whether `test` holds for some part of a stream fed chunk by chunk: each chunk, then its seam with the previous
 * one (the last `span` bytes before it and its first `span`), so a match cut by a chunk's start is found; once
 * found, later chunks are not looked at.
 */
class SeamSearch {
  found = false;
  private tail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly test: (bytes: Buffer) => boolean,
    private readonly span: number,
  ) {}

  feed(chunk: Buffer): void {
    if (this.found) return;
    this.found =
      this.test(chunk) ||
      (this.tail.length > 0 && this.test(Buffer.concat([this.tail, chunk.subarray(0, this.span)])));
    this.tail = lastBytes(this.tail, chunk, this.span);
  }
}

/** bytes after a date's first slash up to the byte after its year: a slash this far from the end was judged */
const AFTER_FIRST_SLASH = 8;

/**
 * Streams the file to `destination` unchanged and checks, at Buffer level (indexOf, no per-byte JS), whether
 * it needs the normalising pass: a BOM, a CR not followed by LF, an empty line (LF LF or LF CR LF, also
 * inside a quoted field: then the pass decides), an empty first line, or quotes in the first line.
 */
export async function downloadChecked(
  source: Readable,
  destination: string,
  onBytes: (bytes: number) => void,
  signal?: AbortSignal,
): Promise<DownloadFacts> {
  const out = await open(destination, 'w');
  const writer = batchedWriter(out);
  try {
    let plain = true;
    let quoteFree = true;
    let groupedNumbers = false;
    const head: Buffer[] = [];
    let headBytes = 0;
    let undecided: Buffer | null = null; // from a quote at the end of the previous chunk that it did not decide
    let bytes = 0;
    let first = true;
    let tail = Buffer.alloc(0); // the last two bytes of the previous chunk
    let headerBytes: Buffer[] | null = [];
    let headerLine = '';
    const slashes: SlashDateEvidence = { dayFirst: false, monthFirst: false, yearFirst: false };
    const units = new SeamSearch(unitNextToDigit, UNIT_SPAN);
    const errorValues = new SeamSearch(errorValueIn, ERROR_SPAN);
    let slashTail: Buffer = Buffer.alloc(0); // the last SLASH_DATE_SPAN bytes of the previous chunk
    for await (const raw of source) {
      if (signal?.aborted) throw signal.reason;
      const chunk = raw as Buffer;
      if (chunk.length === 0) continue;
      bytes += chunk.length;
      onBytes(bytes);
      if (quoteFree && chunk.indexOf(QUOTE) >= 0) quoteFree = false;
      if (headBytes < HEAD_BYTES) {
        const piece = Buffer.from(chunk.subarray(0, HEAD_BYTES - headBytes));
        head.push(piece);
        headBytes += piece.length;
      }
      if (!settled(slashes)) {
        // dates with slashes: a date cut by the chunk's start is judged with the previous chunk's last bytes
        if (slashTail.indexOf(SLASH) >= 0 || chunk.indexOf(SLASH) >= 0) {
          const scanned = slashTail.length > 0 ? Buffer.concat([slashTail, chunk]) : chunk;
          // the tail's slashes far enough from its end were judged with the previous chunk
          const from = Math.max(0, slashTail.length - AFTER_FIRST_SLASH);
          scanSlashDates(scanned, from, slashes, bytes === scanned.length, false);
        }
        slashTail = lastBytes(slashTail, chunk, SLASH_DATE_SPAN);
      }
      units.feed(chunk);
      errorValues.feed(chunk);
      if (!quoteFree && !groupedNumbers) {
        const bytes: Buffer = undecided ? Buffer.concat([undecided, chunk]) : chunk;
        const found = quotedGroupedStart(bytes);
        if (found === true) groupedNumbers = true;
        else undecided = found >= 0 ? Buffer.from(bytes.subarray(found)) : null;
      }
      if (plain) {
        if (first) {
          first = false;
          if (chunk[0] === LF || chunk[0] === CR) plain = false;
          if (chunk.length < 3 || (chunk[0] === BOM[0] && chunk[1] === BOM[1] && chunk[2] === BOM[2])) {
            plain = false;
          }
        }
        // the seam with the previous chunk, then the chunk itself
        if (!plainBytes(Buffer.concat([tail, chunk.subarray(0, 2)])) || !plainBytes(chunk)) plain = false;
        tail = Buffer.from(chunk.subarray(Math.max(0, chunk.length - 2)));
        if (headerBytes) {
          const lf = chunk.indexOf(LF);
          headerBytes.push(lf < 0 ? chunk : chunk.subarray(0, lf));
          if (lf >= 0) {
            let line = Buffer.concat(headerBytes);
            headerBytes = null;
            if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
            if (line.indexOf(QUOTE) >= 0) plain = false;
            else headerLine = line.toString('utf8');
          } else if (bytes > MAX_HEADER_BYTES) plain = false;
        }
      }
      await writer.add(chunk);
    }
    await writer.end();
    if (headerBytes) plain = false; // no line ending at all (header only, or empty)
    if (tail.length > 0 && tail[tail.length - 1] === CR) plain = false; // a final bare CR
    // a year ending the file
    if (slashTail.indexOf(SLASH) >= 0) {
      const from = Math.max(0, slashTail.length - AFTER_FIRST_SLASH);
      scanSlashDates(slashTail, from, slashes, bytes === slashTail.length, true);
    }
    // a quote still undecided at the end of the file: the file ends before its comma
    return {
      plain,
      headerLine,
      quoteFree,
      groupedNumbers,
      head: Buffer.concat(head).toString('utf8'),
      slashDates: slashDateOrder(slashes),
      yearFirstDates: slashes.yearFirst,
      units: units.found,
      errorValues: errorValues.found,
    };
  } finally {
    await writer.settled();
    await out.close();
  }
}

/**
 * Writes chunks to `out` a megabyte at a time (one writev), one write in flight while the next megabyte
 * gathers: a write stream's write per network chunk (16–64 KB) cost about as much again as the download
 * (measured: two 10.7 MB objects at once, 63 against 38 ms).
 */
function batchedWriter(out: FileHandle) {
  let parts: Buffer[] = [];
  let gathered = 0;
  let writing: Promise<void> = Promise.resolve();
  const writeAll = async (buffers: Buffer[], total: number) => {
    let { bytesWritten } = await out.writev(buffers);
    // a short write (rare for a regular file): the rest, until all is written
    while (bytesWritten < total) {
      const rest = Buffer.concat(buffers).subarray(bytesWritten);
      bytesWritten += (await out.write(rest)).bytesWritten;
    }
  };
  const flush = async () => {
    const buffers = parts;
    const total = gathered;
    parts = [];
    gathered = 0;
    await writing;
    writing = writeAll(buffers, total);
    writing.catch(() => undefined); // awaited by the next flush, end or settled
  };
  return {
    async add(chunk: Buffer) {
      parts.push(chunk);
      gathered += chunk.length;
      if (gathered >= WRITE_BYTES) await flush();
    },
    async end() {
      if (gathered > 0) await flush();
      await writing;
    },
    /** the write in flight finished, whatever its outcome (before the file is closed) */
    async settled() {
      await writing.catch(() => undefined);
    },
  };
}

const WRITE_BYTES = 1024 * 1024;

const MAX_HEADER_BYTES = 2 * 1024 * 1024;

/**
 * True when `buf` has no CR followed by something else than LF and no empty line. A CR as its very last
 * byte is left to the next seam (or the end of the file).
 */
function plainBytes(buf: Buffer): boolean {
  for (let i = buf.indexOf(CR); i >= 0; i = buf.indexOf(CR, i + 1)) {
    if (i + 1 < buf.length && buf[i + 1] !== LF) return false;
  }
  return buf.indexOf(LF_LF) < 0 && buf.indexOf(LF_CR_LF) < 0;
}
const LF_LF = Buffer.from([LF, LF]);
const LF_CR_LF = Buffer.from([LF, CR, LF]);
