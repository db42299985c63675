/**
 * The text encodings a CSV/TSV upload is read in. UTF-8 (with or without its byte order mark) is the rule; a
 * file that is not valid UTF-8 and holds no UTF-8 sequence of two or more bytes at all is Windows-1252 — what
 * spreadsheet programs on Windows write as "CSV" in Western Europe and the Americas (`München`, `€`, `„…“`).
 * Mac Roman (older Excel for Mac) is told from it by its letters (`eightBitEncoding`). A file mixing valid UTF-8
 * sequences with bytes UTF-8 refuses is neither and is refused (400). A file that
 * starts with a UTF-16 byte order mark is UTF-16 (little- or big-endian): a spreadsheet program's "Unicode
 * text" export, tab-separated. The stored object keeps the uploaded bytes; every reader (preview, report builds, comparisons) reads them through
 * `utf8Stream`, so DuckDB, csv-parse and the line read-back only ever see UTF-8.
 */
import { Transform, type Readable } from 'node:stream';
import iconv from 'iconv-lite';
import { TEXT_ENCODINGS, type TextEncoding } from '../../db/models/FileVersion';

export { TEXT_ENCODINGS, type TextEncoding };

const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);
const UTF16BE_BOM = Buffer.from([0xfe, 0xff]);

/** UTF-16 by the byte order mark the bytes start with; null without one */
export function utf16ByBom(bytes: Buffer): 'utf-16le' | 'utf-16be' | null {
  if (bytes.subarray(0, 2).equals(UTF16LE_BOM)) return 'utf-16le';
  if (bytes.subarray(0, 2).equals(UTF16BE_BOM)) return 'utf-16be';
  return null;
}

/** iconv-lite's names */
const ICONV_NAMES: Record<'windows-1250' | 'macintosh' | 'utf-16le' | 'utf-16be', string> = {
  'windows-1250': 'win1250',
  macintosh: 'macintosh',
  'utf-16le': 'utf16le',
  'utf-16be': 'utf16be',
};

/** A decoder of chunks of text in `encoding`: a character cut between two chunks comes whole; a UTF-16 byte
 * order mark is dropped. */
export interface ChunkDecoder {
  write(chunk: Buffer): string;
  end(): string;
}

export function chunkDecoder(encoding: Exclude<TextEncoding, 'utf-8'>): ChunkDecoder {
  if (encoding === 'windows-1252') return { write: decodeWindows1252, end: () => '' };
  const decoder = iconv.getDecoder(ICONV_NAMES[encoding]);
  // iconv-lite gives a character outside the BMP cut between chunks as two halves: a high surrogate at the end
  // of one piece waits for the next (alone it would become U+FFFD in UTF-8)
  let held = '';
  return {
    write: (chunk) => {
      const text = held + decoder.write(chunk);
      const last = text.charCodeAt(text.length - 1);
      held = last >= 0xd800 && last <= 0xdbff ? text.slice(-1) : '';
      return held ? text.slice(0, -1) : text;
    },
    end: () => {
      const text = held + (decoder.end() ?? '');
      held = '';
      return text;
    },
  };
}

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

const isAsciiLetter = (b: number) => (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a);
/** a lowercase letter (it has an uppercase form), ß, or an apostrophe: what follows a letter inside most words */
const inWord = (ch: string) => ch !== ch.toUpperCase() || ch === 'ß' || ch === '’' || ch === 'ʼ';

/** a lowercase ASCII letter */
const isAsciiLower = (b: number) => b >= 0x61 && b <= 0x7a;

/**
 * Central European letters whose Windows-1252 bytes are no lowercase letters: ł ą ż ź ľ ť (`³`, `¹`, `¿`, `Ÿ`,
 * `¾`, and 9D which Windows-1252 leaves undefined). Inside a word — after a lowercase letter and before a
 * letter, as in `Wrocławia`, `mąka`, `może`, `ľudia` — they are Windows-1250's; a footnote (`Preis¹`), a unit
 * (`m³`) or a name in capitals (`L'HAŸE`) is never so placed.
 */
const CENTRAL_EUROPEAN_ONLY: ReadonlySet<number> = new Set([0xb3, 0xb9, 0xbf, 0x9f, 0xbe, 0x9d]);

/**
 * Czech ě and ů, which Windows-1252 reads as ì and ù: letters there too, but only at a word's end in the
 * languages it writes (Italian `lunedì`, `più`; French `où`), while Czech has them inside words after any letter
 * (`Město`, `věc`, `domům`). Inside a word they are Windows-1250's.
 */
const CZECH_INSIDE: ReadonlySet<number> = new Set([0xec, 0xf9]);

/**
 * Hungarian ő ű Ő Ű: in Windows-1252 õ û Õ Û, letters of Portuguese and French words too (`põe`, `sûr`) —
 * those languages write them beside letters Hungarian never has (ã ç ê è à …).
 */
const HUNGARIAN_OWN: ReadonlySet<number> = new Set([0xf5, 0xfb, 0xd5, 0xdb]);
/** Hungarian's letters outside ASCII in Windows-1250: á é í ó ö ú ü, ő ű and their capitals */
const HUNGARIAN_LETTERS: ReadonlySet<number> = new Set([
  ...HUNGARIAN_OWN,
  ...[0xe1, 0xe9, 0xed, 0xf3, 0xf6, 0xfa, 0xfc, 0xc1, 0xc9, 0xcd, 0xd3, 0xd6, 0xda, 0xdc],
]);
const isLetter = (ch: string) => ch.toLowerCase() !== ch.toUpperCase() || ch === 'ß';

/**
 * Hungarian text in Windows-1250: every byte that is a letter in Windows-1252 is one of Hungarian's letters
 * (`HUNGARIAN_LETTERS`, which both encodings read alike but for ő ű), one of ő ű after a letter (`Győr`, `kő`)
 * and one of the others (`Pécs`): Portuguese and French, whose õ and û these bytes are there, always have a
 * letter Hungarian lacks beside them (`informações`, `été très sûr`).
 */
function hungarian(bytes: Buffer): boolean {
  let own = false;
  let other = false;
  const letterAt = (i: number) =>
    i >= 0 && i < bytes.length && (isAsciiLetter(bytes[i]) || HUNGARIAN_LETTERS.has(bytes[i]));
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b < 0x80 || !isLetter(WINDOWS_1252_HIGH[b - 0x80])) continue;
    if (!HUNGARIAN_LETTERS.has(b)) return false;
    if (!HUNGARIAN_OWN.has(b)) other = true;
    else if (letterAt(i - 1)) own = true;
  }
  return own && other;
}

/**
 * The 8-bit encoding of text that is not UTF-8: Windows-1252 (Excel's "CSV" on Windows in Western Europe and
 * the Americas), Mac Roman (older Excel for Mac) when more of its bytes after an ASCII letter read as a
 * lowercase letter that way — `Müller` is FC in Windows-1252 (ü; `¸` in Mac Roman) and 9F in Mac Roman (ü; `Ÿ`
 * in Windows-1252) — and one of them, a letter only there, stands inside a word (`Preis¹` is `Preisπ` in Mac
 * Roman: a footnote decides nothing), or Windows-1250 (Excel's "CSV" on Windows in Central Europe: Polish,
 * Czech, Slovak, Hungarian, …) when a letter only it has stands inside a word (`CENTRAL_EUROPEAN_ONLY`,
 * `CZECH_INSIDE`) and at least as many of its bytes after an ASCII letter read as a lowercase letter that way as
 * Windows-1252's, more than Mac Roman's, or when its letters are all Hungarian's with ő or ű among them
 * (`hungarian`). Else, and for text without such bytes, Windows-1252.
 */
export function eightBitEncoding(bytes: Buffer): 'windows-1252' | 'windows-1250' | 'macintosh' {
  let windows = 0;
  let mac = 0;
  let central = 0;
  let macInside = 0;
  let centralInside = 0;
  /** `bytes[i]` is a letter as `table` reads the high bytes */
  const letterAt = (i: number, table: string) =>
    i < bytes.length && (isAsciiLetter(bytes[i]) || (bytes[i] >= 0x80 && inWord(table[bytes[i] - 0x80])));
  for (let i = 1; i < bytes.length; i++) {
    const b = bytes[i];
    if (b < 0x80 || !isAsciiLetter(bytes[i - 1])) continue;
    const asWindows = inWord(WINDOWS_1252_HIGH[b - 0x80]);
    if (asWindows) windows++;
    if (inWord(MAC_ROMAN_HIGH[b - 0x80])) {
      mac++;
      // a letter only Mac Roman reads so, inside a word (a footnote `Preis¹` is π there, at a word's end)
      if (!asWindows && letterAt(i + 1, MAC_ROMAN_HIGH)) macInside++;
    }
    if (inWord(WINDOWS_1250_HIGH[b - 0x80])) central++;
    const ownLetter = (CENTRAL_EUROPEAN_ONLY.has(b) && isAsciiLower(bytes[i - 1])) || CZECH_INSIDE.has(b);
    if (ownLetter && letterAt(i + 1, WINDOWS_1250_HIGH)) centralInside++;
  }
  if ((centralInside > 0 && central >= windows && central > mac) || hungarian(bytes)) return 'windows-1250';
  return macInside > 0 && mac > windows ? 'macintosh' : 'windows-1252';
}

/** the characters of the bytes 80–FF in each 8-bit encoding (iconv-lite's tables) */
const HIGH_BYTES = Buffer.from(Array.from({ length: 0x80 }, (_, i) => 0x80 + i));
const WINDOWS_1252_HIGH = iconv.decode(HIGH_BYTES, 'win1252');
const MAC_ROMAN_HIGH = iconv.decode(HIGH_BYTES, 'macintosh');
const WINDOWS_1250_HIGH = iconv.decode(HIGH_BYTES, 'win1250');

/**
 * Windows-1252 bytes as text (one byte, one character: any chunk boundary is a character boundary). Node's own
 * Latin-1 decoding, then the 32 bytes where the two differ (measured on 25 MB: ~2× faster than iconv-lite's
 * decoder alone).
 */
export function decodeWindows1252(bytes: Buffer): string {
  // 80–9F are where Windows-1252 differs from Latin-1 (`€`, `„`, `“`, …)
  return bytes.toString('latin1').replace(/[\x80-\x9f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80]);
}

/**
 * The stream's bytes as UTF-8: UTF-8 as it is, any other encoding converted chunk by chunk (a UTF-16 byte order
 * mark dropped). Destroying the result destroys the source; an error of the source fails the result.
 */
export function utf8Stream(source: Readable, encoding: TextEncoding | null | undefined): Readable {
  if (!encoding || encoding === 'utf-8') return source;
  const decoder = chunkDecoder(encoding);
  const out = new Transform({
    transform(chunk: Buffer, _enc, done) {
      done(null, Buffer.from(decoder.write(chunk), 'utf8'));
    },
    flush(done) {
      const rest = decoder.end();
      done(null, rest ? Buffer.from(rest, 'utf8') : undefined);
    },
  });
  source.on('error', (err) => out.destroy(err));
  out.on('close', () => source.destroy());
  return source.pipe(out);
}
