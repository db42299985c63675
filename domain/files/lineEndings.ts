/**
 * The one line-ending rule of CSV/TSV files, shared by sniffing, row counting, previews and (later) the
 * report engine: outside quotes, `\r\n`, `\n` and a bare `\r` each end a record (a file may mix them;
 * `\r\n` is one break, not two). Inside a quoted field a line break is part of the value.
 * Uploads record the rule's name in their dialect (file_versions.line_endings) so readers apply it.
 */
export const LINE_ENDINGS = 'crlf-lf-cr';
export type LineEndings = typeof LINE_ENDINGS;

/** The record delimiters of the rule, longest first (csv-parse's `record_delimiter` tries them in order). */
export const RECORD_DELIMITERS: readonly string[] = ['\r\n', '\n', '\r'];

const LF = 0x0a;
const CR = 0x0d;

/** Is `text[i]` a line break that ends a record (the `\n` of a `\r\n` is not: the `\r` already did)? */
export function isLineBreak(text: string, i: number): boolean {
  const ch = text[i];
  return ch === '\r' || (ch === '\n' && (i === 0 || text[i - 1] !== '\r'));
}

/** True when the text holds a line break of the rule. */
export function hasLineBreak(text: string): boolean {
  return text.includes('\n') || text.includes('\r');
}

/**
 * Counts line breaks of a byte stream chunk by chunk (quotes are not followed: an upper bound on records,
 * as the row limit needs). A `\r` at the end of a chunk and a `\n` at the start of the next are one break.
 */
export class LineCounter {
  breaks = 0;
  private last = -1;

  feed(chunk: Buffer): void {
    if (chunk.length === 0) return;
    for (let at = chunk.indexOf(CR); at !== -1; at = chunk.indexOf(CR, at + 1)) this.breaks++;
    for (let at = chunk.indexOf(LF); at !== -1; at = chunk.indexOf(LF, at + 1)) {
      const before = at > 0 ? chunk[at - 1] : this.last;
      if (before !== CR) this.breaks++;
    }
    this.last = chunk[chunk.length - 1];
  }

  /** Lines seen: the breaks, plus a last line that has no break after it. */
  get lines(): number {
    return this.breaks + (this.last !== -1 && this.last !== LF && this.last !== CR ? 1 : 0);
  }
}

/** Lines of a text given as chunks (see LineCounter). */
export function countLines(chunks: Iterable<Buffer>): number {
  const counter = new LineCounter();
  for (const chunk of chunks) counter.feed(chunk);
  return counter.lines;
}
