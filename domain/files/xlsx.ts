import { createReadStream } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import type * as Minio from 'minio';
import * as yauzl from 'yauzl';
import type { Config } from '../../common/config';
import { BadRequestError } from '../../common/errors';
import { NOT_A_SPREADSHEET } from './sniff';
import { checkLocalEntries, type LocalEntryWalk, walkStoredObject, walkStream } from './zipLayout';

export interface XlsxLimits {
  maxUnpackedBytes: number;
  maxEntries: number;
  maxCompressionRatio: number;
  maxRows: number;
  maxColumns: number;
  /** the shared-strings part: unpacked bytes, and strings it holds (counted, not as it declares) */
  maxSharedStringsBytes: number;
  maxSharedStrings: number;
}

/** The workbook limits of the configuration: what an upload, a report build and a comparison check. */
export function xlsxLimits(files: Config['files']): XlsxLimits {
  return {
    maxUnpackedBytes: files.xlsxMaxUnpackedBytes,
    maxEntries: files.xlsxMaxEntries,
    maxCompressionRatio: files.xlsxMaxCompressionRatio,
    maxSharedStringsBytes: files.xlsxMaxSharedStringsBytes,
    maxSharedStrings: files.xlsxMaxSharedStrings,
    maxRows: files.maxRows,
    maxColumns: files.maxColumns,
  };
}

/**
 * A worksheet whose declared dimension is over the row or column limit: a 400 like every refusal of
 * inspectStoredXlsx, but a report build or a comparison names the limit (`inspectionFailureReason`).
 */
export class SheetTooLargeError extends BadRequestError {
  constructor(
    public readonly limit: 'rows' | 'columns',
    message: string,
  ) {
    super(message);
  }
}

/**
 * A file the inspection cannot read as a workbook at all (its zip structure is broken, it is a zip of something
 * else, a worksheet does not unpack or is no worksheet): a 400 at upload like every refusal; for a report build
 * or a comparison the file's own fault (`unparsable_file`), not a guard it is over. `detail` says what, without
 * the upload's words.
 */
export class NotAWorkbookError extends BadRequestError {
  constructor(public readonly detail: string) {
    super(`${NOT_A_SPREADSHEET}: ${detail}`);
  }
}

/** The detail of a zip that yauzl cannot open or whose directory it cannot read. */
export const BROKEN_ZIP = 'the zip structure is broken';

/**
 * The failure reason (README "Reports") of a report build or a comparison that the inspection refused:
 * `unparsable_file` for a file that is no workbook (NotAWorkbookError), `too_many_rows` / `too_many_columns` for
 * a sheet over a limit, `unsafe_workbook` for every other guard.
 */
export function inspectionFailureReason(
  err: BadRequestError,
): 'unparsable_file' | 'too_many_rows' | 'too_many_columns' | 'unsafe_workbook' {
  if (err instanceof NotAWorkbookError) return 'unparsable_file';
  if (!(err instanceof SheetTooLargeError)) return 'unsafe_workbook';
  return err.limit === 'rows' ? 'too_many_rows' : 'too_many_columns';
}

/** Opens a local zip file (lazy entries, sizes validated), as the stored object is opened by `openZip`. */
export function openZipFile(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(
      file,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false },
      (err, zip) => (err || !zip ? reject(err ?? new Error('no zip')) : resolve(zip)),
    ),
  );
}

export interface XlsxFacts {
  /** worksheets in the workbook */
  sheets: number;
  /** rows (after the header) and columns of the first worksheet, as its <dimension> declares; null if it does not */
  rows: number | null;
  columns: number | null;
}

/** Bytes of the object's tail fetched at once: the zip directory of any real workbook fits in it. */
const TAIL_BYTES = 256 * 1024;
/** Inflated bytes of a worksheet's start read to find its <dimension>. */
const DIMENSION_SCAN_BYTES = 64 * 1024;
/** A worksheet entry smaller than this is never called a bomb by its ratio (tiny XML compresses well). */
const RATIO_FLOOR_BYTES = 1024 * 1024;

/**
 * Reads an object in MinIO by byte ranges, for yauzl: the zip directory is read from the end of the object
 * (one ranged GET for the tail, served from memory after that) without downloading or unpacking the file.
 */
export class ObjectRangeReader extends yauzl.RandomAccessReader {
  private tail: Buffer | undefined;
  private tailStart = 0;

  constructor(
    private readonly client: Minio.Client,
    private readonly bucket: string,
    private readonly key: string,
    private readonly size: number,
  ) {
    super();
  }

  async loadTail(): Promise<void> {
    this.tailStart = Math.max(0, this.size - TAIL_BYTES);
    const stream = await this.client.getPartialObject(
      this.bucket,
      this.key,
      this.tailStart,
      this.size - this.tailStart,
    );
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    this.tail = Buffer.concat(chunks);
  }

  override _readStreamForRange(start: number, end: number): Readable {
    if (this.tail && start >= this.tailStart && end <= this.tailStart + this.tail.length) {
      return Readable.from([this.tail.subarray(start - this.tailStart, end - this.tailStart)]);
    }
    const out = new PassThrough();
    if (end <= start) {
      out.end();
      return out;
    }
    this.client
      .getPartialObject(this.bucket, this.key, start, end - start)
      .then((stream) => {
        stream.on('error', (err) => out.destroy(err));
        out.on('close', () => stream.destroy());
        stream.pipe(out);
      })
      .catch((err: Error) => out.destroy(err));
    return out;
  }
}

export function openZip(reader: ObjectRangeReader, size: number): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromRandomAccessReader(
      reader,
      size,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false },
      (err, zip) => (err || !zip ? reject(err ?? new Error('no zip')) : resolve(zip)),
    );
  });
}

/**
 * Where the zip's directory starts (zip64 resolved), as yauzl found it: its cursor before the first entry is
 * read, so call this right after `openZip` (lazy entries).
 */
export function directoryStart(zip: yauzl.ZipFile): number {
  const cursor: unknown = (zip as unknown as { readEntryCursor: unknown }).readEntryCursor;
  if (typeof cursor !== 'number' || zip.entriesRead !== 0)
    throw new Error('directoryStart: call it before reading entries');
  return cursor;
}

export function readEntries(zip: yauzl.ZipFile, maxEntries: number): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry);
      if (entries.length > maxEntries) {
        reject(new BadRequestError(`the workbook has more than ${maxEntries} parts`));
        return;
      }
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', reject);
    zip.readEntry();
  });
}

/** Column letters (A, Z, AA, XFD) to a 1-based number. */
export function columnNumber(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

/** Parses `<dimension ref="A1:K2000"/>` into rows after the header and columns; null when absent. */
export function parseDimension(xmlStart: string): { rows: number; columns: number } | null {
  // [^<>]*, not [^>]*: a start of unclosed `<dimension ` tags is read in linear time
  // the reference in double or single quotes, spaces around '=' (as XML allows)
  const match = /<(?:\w+:)?dimension\b[^<>]*\sref\s*=\s*(["'])([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?\1/i.exec(
    xmlStart,
  );
  if (!match) return null;
  const [, , c1, r1, c2 = c1, r2 = r1] = match;
  const rows = Number(r2) - Number(r1) + 1;
  const columns = columnNumber(c2) - columnNumber(c1) + 1;
  return { rows: Math.max(0, rows - 1), columns };
}

async function worksheetStart(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<string> {
  const stream = await openEntry(zip, entry);
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of stream) {
      chunks.push(chunk as Buffer);
      bytes += (chunk as Buffer).length;
      if (bytes >= DIMENSION_SCAN_BYTES || (chunk as Buffer).includes('<sheetData')) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The workbook parts that hold shared strings (normally one, `xl/sharedStrings.xml`). */
export function isSharedStringsPart(fileName: string): boolean {
  return /^xl\/(?:[^/]+\/)*[^/]*sharedStrings[^/]*\.xml$/i.test(fileName);
}

/** Opens one zip entry as a stream of its inflated bytes (yauzl checks them against the directory). */
export function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(entry, (err, s) => (err || !s ? reject(err ?? new Error('no stream')) : resolve(s))),
  );
}

/**
 * The parts the readers (./xlsxRead.ts: previews and report builds) read whole into memory, besides the shared
 * strings: the limits judge them by the sizes the zip directory gives, which nothing else verifies for a part
 * no guard reads, so `inspectStoredXlsx` unpacks them (counted, not held; real ones are a few KB).
 */
const PARTS_READ_WHOLE = new Set(['xl/workbook.xml', 'xl/_rels/workbook.xml.rels', 'xl/styles.xml']);

/**
 * Unpacks a part and throws its bytes away: yauzl stops it at the first byte over the size the directory
 * gives (validateEntrySizes), so a part that lies about its size is refused before it grows. 400 when it
 * does not unpack as described.
 */
async function checkUnpacksAsDeclared(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<void> {
  let stream: Readable | undefined;
  try {
    stream = await openEntry(zip, entry);
    for await (const chunk of stream) void chunk;
  } catch {
    throw new BadRequestError(
      `the workbook part ${entry.fileName} does not unpack to the size its zip directory gives`,
    );
  } finally {
    stream?.destroy();
  }
}

/** `<si>` elements (one per shared string), with or without a namespace prefix. */
const SHARED_STRING_TAG = /<(?:[A-Za-z_][\w.-]*:)?si[\s/>]/g;

/**
 * The guard on a workbook's shared strings, for uploads and for every reader that must hold them (report
 * builds): the part's unpacked size (from the zip directory, before anything is inflated) and the number of
 * strings it really holds (counted while streaming it, never held: the declared count may lie). Throws
 * BadRequestError (400) naming the limit.
 */
export async function checkSharedStrings(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  limits: Pick<XlsxLimits, 'maxSharedStringsBytes' | 'maxSharedStrings'>,
): Promise<{ bytes: number; strings: number }> {
  if (entry.uncompressedSize > limits.maxSharedStringsBytes) {
    throw new BadRequestError(
      `the workbook's shared strings unpack to ${entry.uncompressedSize} bytes; at most ${limits.maxSharedStringsBytes} are accepted`,
    );
  }
  let strings = 0;
  let carry = '';
  let stream: Readable;
  try {
    stream = await openEntry(zip, entry);
  } catch {
    throw new NotAWorkbookError(`the part ${entry.fileName} cannot be read`);
  }
  try {
    for await (const chunk of stream) {
      // latin1 keeps one character per byte: tags are ASCII, and a tag cut between chunks is in the carry
      const text = carry + (chunk as Buffer).toString('latin1');
      const scanUpTo = Math.max(0, text.length - 64);
      SHARED_STRING_TAG.lastIndex = 0;
      for (let m = SHARED_STRING_TAG.exec(text); m; m = SHARED_STRING_TAG.exec(text)) {
        if (m.index >= scanUpTo) break;
        strings++;
      }
      carry = text.slice(scanUpTo);
      if (strings > limits.maxSharedStrings) break;
    }
    SHARED_STRING_TAG.lastIndex = 0;
    if (strings <= limits.maxSharedStrings) {
      for (let m = SHARED_STRING_TAG.exec(carry); m; m = SHARED_STRING_TAG.exec(carry)) strings++;
    }
  } catch {
    throw new NotAWorkbookError(`the part ${entry.fileName} cannot be read`);
  } finally {
    stream.destroy();
  }
  if (strings > limits.maxSharedStrings) {
    throw new BadRequestError(
      `the workbook has more than ${limits.maxSharedStrings} shared strings; at most ${limits.maxSharedStrings} are accepted`,
    );
  }
  return { bytes: entry.uncompressedSize, strings };
}

/**
 * Checks an XLSX without unpacking it: its zip directory must describe a workbook ([Content_Types].xml,
 * xl/workbook.xml, at least one worksheet), within the limits on parts, unpacked size and compression ratio
 * (decompression bombs), and each worksheet's declared dimension within the row and column limits; its local
 * entries exactly the directory's (`checkLocalEntries`: a streaming reader elsewhere must find the file the
 * service checks and reads). Only the first 64 KB of each worksheet is inflated; the small parts the readers
 * parse whole (workbook, its relationships, styles) are unpacked to check their sizes. The shared strings are
 * bounded by `checkSharedStrings` (size from the directory, then their count while streaming the part).
 * Throws BadRequestError (400) naming the problem; SheetTooLargeError for a sheet over a limit.
 * `inspectStoredXlsx` checks a stored object by ranged reads (uploads); `inspectXlsxFile` a local copy (the
 * report and comparison loads, before they read it).
 */
export async function inspectStoredXlsx(
  client: Minio.Client,
  bucket: string,
  key: string,
  size: number,
  limits: XlsxLimits,
  /** the walk of its local entries made while it was uploaded; absent: the stored object is walked */
  walk?: LocalEntryWalk,
): Promise<XlsxFacts> {
  const reader = new ObjectRangeReader(client, bucket, key, size);
  await reader.loadTail();
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(reader, size);
  } catch {
    throw new NotAWorkbookError(BROKEN_ZIP);
  }
  return inspectZip(
    zip,
    limits,
    async () => walk ?? walkStoredObject(client, bucket, key, limits.maxEntries),
  );
}

/** `inspectStoredXlsx` of a local copy of the workbook (its path). */
export async function inspectXlsxFile(file: string, limits: XlsxLimits): Promise<XlsxFacts> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZipFile(file);
  } catch {
    throw new NotAWorkbookError(BROKEN_ZIP);
  }
  return inspectZip(zip, limits, () =>
    walkStream(createReadStream(file, { highWaterMark: 1024 * 1024 }), limits.maxEntries),
  );
}

/** The checks of `inspectStoredXlsx` on an opened zip (closed at the end); `walk` walks its local entries. */
async function inspectZip(
  zip: yauzl.ZipFile,
  limits: XlsxLimits,
  walk: () => Promise<LocalEntryWalk>,
): Promise<XlsxFacts> {
  const directoryAt = directoryStart(zip);
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new BadRequestError(`the workbook has more than ${limits.maxEntries} parts`);
    }
    let entries: yauzl.Entry[];
    try {
      entries = await readEntries(zip, limits.maxEntries);
    } catch (err) {
      if (err instanceof BadRequestError) throw err;
      throw new NotAWorkbookError(BROKEN_ZIP);
    }
    const names = new Set(entries.map((e) => e.fileName));
    const worksheets = entries
      .filter((e) => /^xl\/worksheets\/[^/]+\.xml$/.test(e.fileName))
      .sort((a, b) => a.fileName.localeCompare(b.fileName, 'en', { numeric: true }));
    if (!names.has('[Content_Types].xml') || !names.has('xl/workbook.xml') || worksheets.length === 0) {
      throw new NotAWorkbookError('a zip file, but not an XLSX workbook');
    }
    if (entries.some((e) => e.isEncrypted())) {
      throw new BadRequestError('encrypted workbooks are not supported');
    }
    // the service reads parts through this directory (./xlsxRead.ts); a reader of the local entries in order
    // (other tools, ExcelJS's streaming reader) must find the same parts, or a part could hide from these limits
    checkLocalEntries(await walk(), entries, directoryAt);
    let unpacked = 0;
    for (const entry of entries) {
      unpacked += entry.uncompressedSize;
      const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
      if (entry.uncompressedSize > RATIO_FLOOR_BYTES && ratio > limits.maxCompressionRatio) {
        throw new BadRequestError(
          `the workbook part ${entry.fileName} unpacks ${Math.round(ratio)} times its size; at most ${limits.maxCompressionRatio} is accepted (a decompression bomb?)`,
        );
      }
    }
    if (unpacked > limits.maxUnpackedBytes) {
      throw new BadRequestError(
        `the workbook unpacks to ${unpacked} bytes; at most ${limits.maxUnpackedBytes} are accepted`,
      );
    }
    for (const entry of entries) {
      if (isSharedStringsPart(entry.fileName)) await checkSharedStrings(zip, entry, limits);
      else if (PARTS_READ_WHOLE.has(entry.fileName)) await checkUnpacksAsDeclared(zip, entry);
    }
    let first: { rows: number; columns: number } | null = null;
    for (const [index, sheet] of worksheets.entries()) {
      let xml: string;
      try {
        xml = await worksheetStart(zip, sheet);
      } catch {
        throw new NotAWorkbookError(`the worksheet ${sheet.fileName} cannot be read`);
      }
      if (!/<(?:\w+:)?worksheet\b/.test(xml)) {
        throw new NotAWorkbookError(`${sheet.fileName} is not a worksheet`);
      }
      const dim = parseDimension(xml);
      if (dim && dim.rows > limits.maxRows) {
        throw new SheetTooLargeError(
          'rows',
          `the sheet has ${dim.rows} rows; at most ${limits.maxRows} are accepted`,
        );
      }
      if (dim && dim.columns > limits.maxColumns) {
        throw new SheetTooLargeError(
          'columns',
          `the sheet has ${dim.columns} columns; at most ${limits.maxColumns} are accepted`,
        );
      }
      if (index === 0) first = dim;
    }
    return { sheets: worksheets.length, rows: first?.rows ?? null, columns: first?.columns ?? null };
  } finally {
    zip.close();
  }
}
