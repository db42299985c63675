import { isAscii, isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { BadRequestError, PayloadTooLargeError } from '../../common/errors';
import { MAX_FILE_BYTES, type SheetLimits } from './formats';
import { LineCounter } from './lineEndings';
import {
  chunkDecoder,
  eightBitEncoding,
  holdsUtf8Sequence,
  type ChunkDecoder,
  type TextEncoding,
} from './encoding';
import {
  incompleteUtf8Tail,
  MIXED_ENCODINGS,
  NOT_A_SPREADSHEET,
  sniff,
  SNIFF_BYTES,
  type Sniffed,
} from './sniff';
import { LocalEntryWalk } from './zipLayout';

export const TOO_LARGE = `the file is larger than 25 MB (${MAX_FILE_BYTES} bytes)`;

/**
 * Passes an upload through unchanged while it checks it, so nothing is held but the first 64 KB:
 * counts bytes (over 25 MB → 413 at once), decides the format from the first bytes (not a spreadsheet
 * → 400 before anything is stored), and for text checks there is no NUL, decides the encoding (UTF-16 after
 * its byte order mark, else UTF-8 while every byte so far is, else Windows-1252 or Mac Roman:
 * domain/files/encoding.ts) and
 * counts lines against the row limit; for XLSX walks the zip's local entries as the report builds' reader will
 * (`zipWalk`, compared with the zip directory once stored). Fails the stream with the typed error, which
 * aborts the upload.
 */
export class UploadInspector extends Transform {
  bytes = 0;
  sniffed?: Sniffed;
  /** lines seen (CSV/TSV) by the rule of domain/files/lineEndings.ts; a last line without a break counts too */
  private readonly lines = new LineCounter();
  private held: Buffer[] = [];
  private heldBytes = 0;
  private utf8Carry: Buffer = Buffer.alloc(0);
  /** CSV/TSV: UTF-8 until a byte says otherwise (then Windows-1252 for the whole file) */
  private textEncoding: TextEncoding = 'utf-8';
  /** a UTF-8 sequence of two or more bytes (or the byte order mark) was seen: the file cannot be Windows-1252 */
  private utf8Seen = false;
  /** UTF-16: the text decoded as it comes, its line breaks counted in the text (its bytes hold NULs) */
  private utf16?: ChunkDecoder;
  private readonly hash = createHash('sha256');
  private digest: string | undefined;
  /** XLSX: its local entries as a streaming reader walks them, fed every byte (at most `maxZipEntries` kept) */
  zipWalk?: LocalEntryWalk;

  constructor(
    private readonly name: string,
    private readonly limits: SheetLimits,
    private readonly maxBytes = MAX_FILE_BYTES,
    /** XLSX_MAX_ENTRIES (its default here) */
    private readonly maxZipEntries = 1000,
  ) {
    super();
  }

  /**
   * Rows of a CSV/TSV: lines after the header (a quoted line break counts as a line: an upper bound); lines
   * before the header (Excel's separator line, a title or notes) are none.
   */
  get dataRows(): number | null {
    if (!this.sniffed || this.sniffed.format === 'xlsx') return null;
    return Math.max(0, this.lines.lines - this.linesBeforeRows());
  }

  /** the header's line, and the lines before it (Excel's separator line, a title or notes: sniff.ts) */
  private linesBeforeRows(): number {
    return (this.sniffed?.linesBeforeHeader ?? 0) + 1;
  }

  /** CSV/TSV: the encoding its bytes are read in, known once the stream has ended; null for XLSX */
  get encoding(): TextEncoding | null {
    if (!this.sniffed || this.sniffed.format === 'xlsx') return null;
    return this.textEncoding;
  }

  /** sha256 (hex) of every byte seen; known once the stream has ended (Idempotency-Key fingerprints uploads by it) */
  get contentSha256(): string {
    if (this.digest === undefined) throw new Error('the upload has not ended');
    return this.digest;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      this.bytes += chunk.length;
      this.hash.update(chunk);
      if (this.bytes > this.maxBytes) throw new PayloadTooLargeError(TOO_LARGE);
      if (!this.sniffed) {
        this.held.push(chunk);
        this.heldBytes += chunk.length;
        if (this.heldBytes < SNIFF_BYTES) return done();
        const sample = Buffer.concat(this.held);
        this.held = [];
        this.decide(sample, false);
        this.pass(sample);
        return done();
      }
      this.pass(chunk);
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      if (!this.sniffed) {
        const sample = Buffer.concat(this.held);
        this.held = [];
        this.decide(sample, true);
        this.pass(sample);
      }
      this.zipWalk?.end();
      // a file ending inside a UTF-8 sequence: its last bytes are no UTF-8
      if (this.sniffed!.format !== 'xlsx' && this.utf8Carry.length > 0) this.notUtf8(this.utf8Carry);
      if (this.utf16 && this.bytes % 2 === 1) {
        throw new BadRequestError(`${NOT_A_SPREADSHEET}: the UTF-16 text ends in the middle of a character`);
      }
      // the streaming check counts line breaks; a last line without one is only known here
      if ((this.dataRows ?? 0) > this.limits.maxRows) throw this.tooManyRows();
      this.digest = this.hash.digest('hex');
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  private decide(sample: Buffer, complete: boolean): void {
    this.sniffed = sniff(sample, complete, this.name, this.limits);
    if (this.sniffed.encoding) this.textEncoding = this.sniffed.encoding;
    if (this.textEncoding === 'utf-16le' || this.textEncoding === 'utf-16be') {
      this.utf16 = chunkDecoder(this.textEncoding);
    }
    if (this.sniffed.format === 'xlsx') this.zipWalk = new LocalEntryWalk(this.maxZipEntries);
  }

  private pass(chunk: Buffer): void {
    if (this.sniffed!.format !== 'xlsx') this.checkText(chunk);
    else if (!this.zipWalk!.done) this.zipWalk!.feed(chunk);
    this.push(chunk);
  }

  private checkText(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.utf16) {
      const text = this.utf16.write(chunk);
      if (text.includes('\u0000')) throw new BadRequestError(`${NOT_A_SPREADSHEET}: it holds NUL characters`);
      this.lines.feed(Buffer.from(text, 'utf8'));
      if (this.lines.breaks - this.linesBeforeRows() > this.limits.maxRows) throw this.tooManyRows();
      return;
    }
    if (chunk.indexOf(0) !== -1) throw new BadRequestError(`${NOT_A_SPREADSHEET}: it holds NUL bytes`);
    if (this.textEncoding === 'utf-8') {
      const whole = this.utf8Carry.length > 0 ? Buffer.concat([this.utf8Carry, chunk]) : chunk;
      const tail = incompleteUtf8Tail(whole);
      const complete = whole.subarray(0, whole.length - tail);
      if (isUtf8(complete)) {
        this.utf8Carry = tail > 0 ? Buffer.from(whole.subarray(whole.length - tail)) : Buffer.alloc(0);
        if (!this.utf8Seen && !isAscii(complete)) this.utf8Seen = true;
      } else {
        this.notUtf8(whole);
      }
    }
    this.lines.feed(chunk);
    if (this.lines.breaks - this.linesBeforeRows() > this.limits.maxRows) throw this.tooManyRows();
  }

  /**
   * Bytes that are not UTF-8: the file is Windows-1252 (or Mac Roman, as these bytes show) from its first byte,
   * unless UTF-8 sequences came before or come in these bytes (a mix: 400).
   */
  private notUtf8(bytes: Buffer): void {
    if (this.utf8Seen || holdsUtf8Sequence(bytes)) throw new BadRequestError(MIXED_ENCODINGS);
    this.textEncoding = eightBitEncoding(bytes);
    this.utf8Carry = Buffer.alloc(0);
  }

  private tooManyRows(): BadRequestError {
    return new BadRequestError(`the sheet has more than ${this.limits.maxRows} rows`);
  }
}
