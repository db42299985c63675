import { Transform, type Readable } from 'node:stream';
import { utf8Stream, type TextEncoding } from './encoding';

const LF = 0x0a;
const CR = 0x0d;

/**
 * A version's text as its readers take it (preview, report builds, comparisons, key checks): UTF-8 whatever it
 * was stored in (domain/files/encoding.ts), without the lines the upload found before its header (Excel's
 * separator line, a title or notes: domain/files/sniff.ts). A version without such lines is its UTF-8 stream
 * as it is.
 */
export function tableText(
  source: Readable,
  encoding: TextEncoding | null | undefined,
  linesBeforeHeader: number | null | undefined,
): Readable {
  return withoutLeadingLines(utf8Stream(source, encoding), linesBeforeHeader ?? 0);
}

/**
 * The stream without its first `lines` lines, each ended by `\r\n`, `\n` or a bare `\r` (the rule of
 * domain/files/lineEndings.ts; quotes are not followed — the upload counted the lines the same way). `lines` 0:
 * the stream itself. Destroying the result destroys the source; an error of the source fails the result.
 */
export function withoutLeadingLines(source: Readable, lines: number): Readable {
  if (lines <= 0) return source;
  let left = lines;
  /** the last byte skipped was a CR: an LF right after it belongs to the same break */
  let afterCr = false;
  const out = new Transform({
    // a download's chunks (64 KB) pass without waiting on the default 16 KB
    highWaterMark: 1024 * 1024,
    transform(chunk: Buffer, _enc, done) {
      let at = 0;
      if (afterCr && chunk.length > 0) {
        if (chunk[0] === LF) at = 1;
        afterCr = false;
      }
      while (left > 0 && at < chunk.length) {
        const b = chunk[at++];
        if (b === LF) left--;
        else if (b === CR) {
          left--;
          if (at < chunk.length) {
            if (chunk[at] === LF) at++;
          } else afterCr = true;
        }
      }
      done(null, at < chunk.length ? chunk.subarray(at) : undefined);
    },
  });
  source.on('error', (err) => out.destroy(err));
  out.on('close', () => source.destroy());
  return source.pipe(out);
}
