/**
 * Excel's separator line: a CSV whose first line is `sep=;` (or `sep=,`, `sep=<tab>`) names its delimiter
 * there, and Excel opens it with that delimiter and without that line — the header is the next line, shown as
 * row 1. Tools write it so that a semicolon file opens as a table whatever the reader's regional settings.
 *
 * The upload's sniff takes the delimiter from it (domain/files/sniff.ts) and every reader of a version's text —
 * preview, report builds, comparisons — reads the text without it (`withoutSeparatorLine`), so the header, the
 * rows and their numbers are what a spreadsheet shows. The stored object keeps the uploaded bytes. The line is
 * found again in the bytes each time (nothing is recorded beside the delimiter): it is the file's first line,
 * after a byte order mark if there is one, exactly `sep=` (any case) and one character.
 */
import { Transform, type Readable } from 'node:stream';
import { utf8Stream, type TextEncoding } from './encoding';

export interface SeparatorLine {
  /** the character the line names (any: the sniff refuses one that is not a delimiter of the service) */
  delimiter: string;
  /** the line's length in UTF-16 units of the text, its line break included (the byte order mark is not) */
  length: number;
}

const LINE = /^sep=([^\r\n])(\r\n|\n|\r)/i;
/** `sep=` and one character, then the break: without its break so far (`complete` false) it is not yet known */
const STARTED = /^(s(e(p(=([^\r\n](\r)?)?)?)?)?)?$/i;

/**
 * The separator line `text` starts with (after an optional U+FEFF), null when it has none, or `undefined` when
 * `text` is too short to tell and more may follow (`complete` false).
 */
export function separatorLine(text: string, complete: boolean): SeparatorLine | null | undefined {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const match = LINE.exec(body);
  if (match) {
    // `sep=;\r` at the very end of what is known: a `\n` may follow and belong to the same break
    if (match[2] === '\r' && body.length === match[0].length && !complete) return undefined;
    return { delimiter: match[1], length: match[0].length };
  }
  if (!complete && STARTED.test(body)) return undefined;
  return null;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** enough bytes to tell: a byte order mark, `sep=`, a character of up to 4 bytes, CR LF */
const DECIDING_BYTES = 3 + 4 + 4 + 2;

/**
 * The UTF-8 stream without its separator line (a byte order mark before it is kept); any other stream passes
 * unchanged. Only the first bytes are held, until they tell. Destroying the result destroys the source; an error
 * of the source fails the result.
 */
export function withoutSeparatorLine(source: Readable): Readable {
  let held: Buffer | null = Buffer.alloc(0);
  const decide = (out: Transform, complete: boolean): boolean => {
    const bytes = held!;
    // a byte order mark cut after its first bytes: the next chunk tells
    if (!complete && bytes.length < 3 && BOM.subarray(0, bytes.length).equals(bytes)) return false;
    const line = separatorLine(bytes.subarray(0, DECIDING_BYTES).toString('utf8'), complete);
    if (line === undefined) return false;
    held = null;
    if (line === null) {
      out.push(bytes);
    } else {
      const bom = bytes.subarray(0, 3).equals(BOM) ? 3 : 0;
      if (bom) out.push(BOM);
      // the line is ASCII but for its one character
      const lineBytes = Buffer.byteLength(bytes.subarray(bom).toString('utf8').slice(0, line.length), 'utf8');
      out.push(bytes.subarray(bom + lineBytes));
    }
    return true;
  };
  const out: Transform = new Transform({
    // a download's chunks (64 KB) pass without waiting on the default 16 KB
    highWaterMark: 1024 * 1024,
    transform(chunk: Buffer, _enc, done) {
      if (held === null) return done(null, chunk);
      held = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
      decide(out, held.length >= DECIDING_BYTES);
      done();
    },
    flush(done) {
      if (held !== null && held.length > 0) decide(out, true);
      done();
    },
  });
  source.on('error', (err) => out.destroy(err));
  out.on('close', () => source.destroy());
  return source.pipe(out);
}

/**
 * A version's text as its readers take it (preview, report builds, comparisons): UTF-8 whatever it was stored
 * in (`utf8Stream`), without Excel's separator line.
 */
export function tableText(source: Readable, encoding: TextEncoding | null | undefined): Readable {
  return withoutSeparatorLine(utf8Stream(source, encoding));
}
