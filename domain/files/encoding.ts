/**
 * The text encodings a CSV/TSV upload is read in. UTF-8 (with or without its byte order mark) is the rule; a
 * file that is not valid UTF-8 and holds no UTF-8 sequence of two or more bytes at all is Windows-1252 — what
 * spreadsheet programs on Windows write as "CSV" in Western Europe and the Americas (`München`, `€`, `„…“`).
 * A file mixing valid UTF-8 sequences with bytes UTF-8 refuses is neither and is refused (400). The stored
 * object keeps the uploaded bytes; every reader (preview, report builds, comparisons) reads them through
 * `utf8Stream`, so DuckDB, csv-parse and the line read-back only ever see UTF-8.
 */
import { Transform, type Readable } from 'node:stream';
import iconv from 'iconv-lite';

export type TextEncoding = 'utf-8' | 'windows-1252';
export const TEXT_ENCODINGS: readonly TextEncoding[] = ['utf-8', 'windows-1252'];

/**
 * Whether `bytes` (not valid UTF-8 as a whole) hold a valid UTF-8 sequence of two or more bytes: a text with
 * both is a mix of encodings, not Windows-1252 (whose letters, ä = E4, do not form such sequences in words).
 */
export function holdsUtf8Sequence(bytes: Buffer): boolean {
  const text = bytes.toString('utf8'); // every invalid byte becomes U+FFFD
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80 && code !== 0xfffd) return true;
  }
  return false;
}

/** Windows-1252 bytes as text (one byte, one character: any chunk boundary is a character boundary). */
export function decodeWindows1252(bytes: Buffer): string {
  return iconv.decode(bytes, 'win1252');
}

/**
 * The stream's bytes as UTF-8: UTF-8 as it is, Windows-1252 converted chunk by chunk. Destroying the result
 * destroys the source; an error of the source fails the result.
 */
export function utf8Stream(source: Readable, encoding: TextEncoding | null | undefined): Readable {
  if (!encoding || encoding === 'utf-8') return source;
  const out = new Transform({
    transform(chunk: Buffer, _enc, done) {
      done(null, Buffer.from(decodeWindows1252(chunk), 'utf8'));
    },
  });
  source.on('error', (err) => out.destroy(err));
  out.on('close', () => source.destroy());
  return source.pipe(out);
}
