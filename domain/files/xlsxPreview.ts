import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type * as Minio from 'minio';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import type * as yauzl from 'yauzl';
import { BadRequestError } from '../../common/errors';
import { plainCell, shapePreview, type CellValue, type Preview, type PreviewOptions } from './preview';
import { UnreadableFileError } from './unreadable';
import {
  columnNumber,
  isSharedStringsPart,
  ObjectRangeReader,
  openEntry,
  openZip,
  readEntries,
  type XlsxLimits,
} from './xlsx';
import { BUILTIN_DATE_FORMATS, isDateFormat, isoCellDate, serialDate } from './xlsxDates';

/** Small parts (workbook, relationships, styles) read whole; a larger one is ignored as if absent. */
const SMALL_PART_BYTES = 8 * 1024 * 1024;
/** Set when a reader has seen all it needs: the stream is left there. */
class Enough extends Error {}

const CANNOT_READ = 'the workbook cannot be read';

/**
 * A failure to unpack a part: zlib's (corrupt deflate data) or yauzl's (a part that does not unpack to its
 * size, a local header that is not one). Anything else (the object store going away) is not the file's fault.
 */
function isUnpackError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('Z_')) return true;
  return /bytes in the stream|local file header|overflows file bounds|compression method|invalid .*signature/i.test(
    err.message,
  );
}

/** Reading `part` failed: a 422 naming the part when it is the file's fault, else the error itself. */
function unreadablePart(part: string, err: unknown): unknown {
  if (err instanceof UnreadableFileError || !isUnpackError(err)) return err;
  return new UnreadableFileError(`${CANNOT_READ}: the part ${part} cannot be unpacked`);
}

function localName(name: string): string {
  return name.slice(name.indexOf(':') + 1);
}

/**
 * Feeds an entry's XML to a SAX parser chunk by chunk until `handlers` say they have enough (they throw
 * Enough) or the part ends. Nothing but the parser's state and what the handlers keep is held.
 */
async function scanXml(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  on: {
    open?: (tag: SaxesTagPlain) => void;
    close?: (name: string) => void;
    text?: (text: string) => void;
  },
): Promise<void> {
  const parser = new SaxesParser();
  if (on.open) parser.on('opentag', (tag) => on.open!(tag));
  if (on.close) parser.on('closetag', (tag) => on.close!(localName(tag.name)));
  if (on.text) {
    parser.on('text', (t) => on.text!(t));
    parser.on('cdata', (t) => on.text!(t));
  }
  // saxes throws on XML that is not well-formed (an undefined entity, a mismatched close tag, &#0;); its
  // message may quote the document, so only the part and the position are told
  const write = (text: string, end = false) => {
    try {
      parser.write(text);
      if (end) parser.close();
    } catch (err) {
      if (err instanceof Enough) throw err;
      throw new UnreadableFileError(
        `${CANNOT_READ}: the part ${entry.fileName} is not well-formed XML (line ${parser.line}, column ${parser.column})`,
      );
    }
  };
  let stream: Readable | undefined;
  const decoder = new StringDecoder('utf8');
  try {
    stream = await openEntry(zip, entry);
    for await (const chunk of stream) write(decoder.write(chunk as Buffer));
    write(decoder.end(), true);
  } catch (err) {
    if (!(err instanceof Enough)) throw unreadablePart(entry.fileName, err);
  } finally {
    stream?.destroy();
  }
}

async function smallPart(zip: yauzl.ZipFile, entry: yauzl.Entry | undefined): Promise<string | null> {
  if (!entry || entry.uncompressedSize > SMALL_PART_BYTES) return null;
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of await openEntry(zip, entry)) chunks.push(chunk as Buffer);
  } catch (err) {
    throw unreadablePart(entry.fileName, err);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function attr(tag: string, name: string): string | undefined {
  return new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
}

/** A relationship target (relative to xl/ or absolute) as a zip entry name. */
function partName(target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = ['xl'];
  for (const piece of target.split('/')) {
    if (piece === '..') parts.pop();
    else if (piece !== '.') parts.push(piece);
  }
  return parts.join('/');
}

interface WorkbookMap {
  sheet: yauzl.Entry;
  /** the name of `sheet` as the workbook lists it (null for a workbook that lists no sheets) */
  sheetName: string | null;
  /** the names of the workbook's sheets, in its order */
  sheetNames: string[];
  sharedStrings?: yauzl.Entry;
  styles?: yauzl.Entry;
  date1904: boolean;
}

/** An XML attribute's text with its character references decoded (sheet names: `R&amp;D` is `R&D`). */
function xmlText(value: string): string {
  return value.replace(
    /&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|(amp|lt|gt|quot|apos));/gi,
    (whole, dec, hex, name) => {
      if (name)
        return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[(name as string).toLowerCase()] ?? whole;
      const code = dec ? Number(dec) : parseInt(hex as string, 16);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    },
  );
}

/**
 * The sheet to preview — the one named `sheetName`, else the first (by the workbook's list and its
 * relationships; else the first worksheet part by name) — with the workbook's sheet names, strings and styles.
 * A name the workbook does not list is 400, naming the sheets it has.
 */
async function mapWorkbook(
  zip: yauzl.ZipFile,
  entries: yauzl.Entry[],
  sheetName?: string,
): Promise<WorkbookMap> {
  const layout = await workbookLayout(zip, entries);
  const sheetNames = layout.sheets.map((s) => s.name);
  let chosen = layout.sheets[0];
  if (sheetName !== undefined) {
    chosen = layout.sheets.find((s) => s.name === sheetName)!;
    if (!chosen) {
      const names = sheetNames.map((n) => JSON.stringify(n)).join(', ');
      throw new BadRequestError(
        `query.sheet: the workbook has no sheet named ${JSON.stringify(sheetName)} (its sheets: ${names || 'none listed'})`,
      );
    }
  }
  const named = chosen?.part;
  if (sheetName !== undefined && !named) {
    throw new UnreadableFileError(
      `${CANNOT_READ}: its sheet ${JSON.stringify(sheetName)} has no worksheet part`,
    );
  }
  const sheet = named ?? layout.worksheets[0];
  if (!sheet) throw new UnreadableFileError(`${CANNOT_READ}: it has no worksheet`);
  return {
    sheet,
    sheetName: named ? (chosen?.name ?? null) : null,
    sheetNames,
    sharedStrings: layout.sharedStrings,
    styles: layout.styles,
    date1904: layout.date1904,
  };
}

/** Where a workbook's sheets and shared parts are: what the preview and the report loader both read by. */
export interface WorkbookLayout {
  /** the sheets the workbook lists, in its order, each with its worksheet part (none if its relationship leads nowhere) */
  sheets: Array<{ name: string; part: yauzl.Entry | undefined }>;
  /** every worksheet part (`xl/worksheets/*.xml`), by name, numbers in order */
  worksheets: yauzl.Entry[];
  sharedStrings?: yauzl.Entry;
  styles?: yauzl.Entry;
  date1904: boolean;
}

/**
 * The workbook's list of sheets (names decoded) with each one's worksheet part by its relationship (a target
 * relative to xl/ or absolute: partName), its shared strings and styles parts (by relationship type, else by
 * their usual names), and its date system.
 */
export async function workbookLayout(zip: yauzl.ZipFile, entries: yauzl.Entry[]): Promise<WorkbookLayout> {
  const byName = new Map(entries.map((e) => [e.fileName, e]));
  const workbook = (await smallPart(zip, byName.get('xl/workbook.xml'))) ?? '';
  const rels = (await smallPart(zip, byName.get('xl/_rels/workbook.xml.rels'))) ?? '';
  const targets = new Map<string, { type: string; target: string }>();
  for (const m of rels.matchAll(/<(?:\w+:)?Relationship\b[^<>]*>/g)) {
    const id = attr(m[0], 'Id');
    const target = attr(m[0], 'Target');
    if (id && target) targets.set(id, { type: attr(m[0], 'Type') ?? '', target });
  }
  const partOf = (rel: { target: string } | undefined) =>
    rel ? byName.get(partName(rel.target)) : undefined;
  // the workbook's list of sheets, in order: each tag's name and relationship id
  const sheets = [...elementContent(workbook, 'sheets').matchAll(/<(?:\w+:)?sheet\b[^<>]*>/g)].map((m) => {
    const rel = /\br:id="([^"]*)"/.exec(m[0])?.[1];
    return { name: xmlText(attr(m[0], 'name') ?? ''), part: partOf(rel ? targets.get(rel) : undefined) };
  });
  const byType = (suffix: string) => partOf([...targets.values()].find((r) => r.type.endsWith(suffix)));
  return {
    sheets,
    worksheets: entries
      .filter((e) => /^xl\/worksheets\/[^/]+\.xml$/.test(e.fileName))
      .sort((a, b) => a.fileName.localeCompare(b.fileName, 'en', { numeric: true })),
    sharedStrings:
      byType('/sharedStrings') ??
      byName.get('xl/sharedStrings.xml') ??
      entries.find((e) => isSharedStringsPart(e.fileName)),
    styles: byType('/styles') ?? byName.get('xl/styles.xml'),
    date1904: /<(?:\w+:)?workbookPr\b[^<>]*\bdate1904="(?:1|true)"/.test(workbook),
  };
}

/**
 * The content of the first `<name …>…</name>` element (any namespace prefix), or '' when it has none or is
 * never closed. The opening tag and then its close tag are each searched for once, forward: linear in the part,
 * whatever it holds (a lazy `([\s\S]*?)<\/name>` retried from every opening is quadratic without a close tag).
 */
function elementContent(xml: string, name: string): string {
  const open = new RegExp(`<(?:\\w+:)?${name}\\b[^<>]*>`).exec(xml);
  if (!open || open[0].endsWith('/>')) return '';
  const start = open.index + open[0].length;
  const close = new RegExp(`<\\/(?:\\w+:)?${name}\\s*>`, 'g');
  close.lastIndex = start;
  const end = close.exec(xml);
  return end ? xml.slice(start, end.index) : '';
}

/**
 * Which cell styles (the `s` attribute, an index into cellXfs) show dates. The styles part is scanned with
 * patterns that cannot run past a `<` or `>` (`[^<>]*`, not `[^>]*`), so a part of unclosed tags is read in
 * linear time (a 1 MB part of `<numFmt ` took minutes with `[^>]*`).
 */
async function dateStyles(zip: yauzl.ZipFile, styles: yauzl.Entry | undefined): Promise<Set<number>> {
  const xml = await smallPart(zip, styles);
  const dates = new Set<number>();
  if (!xml) return dates;
  const custom = new Map<number, string>();
  for (const m of xml.matchAll(/<(?:\w+:)?numFmt\b[^<>]*>/g)) {
    const id = Number(attr(m[0], 'numFmtId'));
    // the code as written, its quotes and brackets decoded (`0&quot; days&quot;` is `0" days"`, no date)
    const code = attr(m[0], 'formatCode');
    if (Number.isInteger(id) && code !== undefined) custom.set(id, xmlText(code));
  }
  const cellXfs = elementContent(xml, 'cellXfs');
  let index = 0;
  for (const m of cellXfs.matchAll(/<(?:\w+:)?xf\b[^<>]*>/g)) {
    const id = Number(attr(m[0], 'numFmtId') ?? 0);
    const code = custom.get(id);
    if (code !== undefined ? isDateFormat(code) : BUILTIN_DATE_FORMATS.has(id)) dates.add(index);
    index++;
  }
  return dates;
}

/** A cell as read from the sheet: a value, or the index of a shared string resolved afterwards. */
type RawCell = CellValue | { shared: number };

/** Reads the first `wanted` rows of a worksheet, each at most `width` cells, and stops there. */
async function readRows(
  zip: yauzl.ZipFile,
  sheet: yauzl.Entry,
  wanted: number,
  width: number,
  maxChars: number,
  dates: Set<number>,
  date1904: boolean,
): Promise<RawCell[][]> {
  const rows: RawCell[][] = [];
  let row: RawCell[] | undefined;
  let next = 0; // column of the next cell without an `r`
  let cell: { col: number; type: string; style: number; v: string; inline: string } | undefined;
  let inV = false;
  let inInlineText = false;
  let inPhonetic = false;
  const clip = (text: string) => (text.length > maxChars ? text.slice(0, maxChars) : text);
  const value = (c: NonNullable<typeof cell>): RawCell => {
    switch (c.type) {
      case 's':
        return c.v === '' ? null : { shared: Number(c.v) };
      case 'inlineStr':
        return clip(c.inline);
      case 'str':
        return clip(c.v);
      case 'b':
        return c.v === '' ? null : c.v === '1' || c.v === 'true';
      case 'e':
        return c.v;
      case 'd': {
        if (c.v === '') return null;
        // a date cell whose text is no date is shown as its text (an Invalid Date has no ISO form)
        const date = isoCellDate(c.v);
        return Number.isNaN(date.getTime()) ? clip(c.v) : plainCell(date, maxChars);
      }
      default: {
        if (c.v === '') return null;
        const n = Number(c.v);
        if (!Number.isFinite(n)) return clip(c.v);
        if (!dates.has(c.style)) return n;
        // the report engine's rule and conversion (./xlsxDates.ts); a serial beyond the dates JavaScript can
        // hold is shown as the number
        const date = serialDate(n, date1904);
        return Number.isNaN(date.getTime()) ? n : date.toISOString();
      }
    }
  };
  await scanXml(zip, sheet, {
    open(tag) {
      const name = localName(tag.name);
      if (name === 'row') {
        row = [];
        next = 0;
      } else if (name === 'c' && row) {
        const ref = tag.attributes.r;
        const letters = ref ? /^[A-Z]+/i.exec(ref)?.[0] : undefined;
        const col = letters ? columnNumber(letters) - 1 : next;
        next = col + 1;
        cell = {
          col,
          type: tag.attributes.t ?? 'n',
          style: Number(tag.attributes.s ?? 0),
          v: '',
          inline: '',
        };
      } else if (name === 'v' && cell) inV = true;
      else if (name === 'rPh') inPhonetic = true;
      else if (name === 't' && cell && !inPhonetic) inInlineText = true;
    },
    text(text) {
      if (!cell) return;
      if (inV && cell.v.length <= maxChars) cell.v += text;
      else if (inInlineText && cell.inline.length <= maxChars) cell.inline += text;
    },
    close(name) {
      if (name === 'v') inV = false;
      else if (name === 'rPh') inPhonetic = false;
      else if (name === 't') inInlineText = false;
      else if (name === 'c' && cell && row) {
        if (cell.col < width) row[cell.col] = value(cell);
        cell = undefined;
      } else if (name === 'row' && row) {
        rows.push(Array.from(row, (c) => c ?? null));
        row = undefined;
        if (rows.length >= wanted) throw new Enough();
      } else if (name === 'sheetData') throw new Enough();
    },
  });
  return rows;
}

/**
 * Streams the shared strings and keeps only those at `needed` indexes (cut at maxChars), stopping after the
 * last one needed: memory grows with what a preview shows, never with the part.
 */
async function readSharedStrings(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  needed: Set<number>,
  maxChars: number,
): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  if (needed.size === 0) return found;
  const last = Math.max(...needed);
  let index = -1;
  let current: string | undefined;
  let inText = false;
  let inPhonetic = false;
  await scanXml(zip, entry, {
    open(tag) {
      const name = localName(tag.name);
      if (name === 'si') {
        index++;
        current = needed.has(index) ? '' : undefined;
      } else if (name === 'rPh') inPhonetic = true;
      else if (name === 't' && !inPhonetic) inText = true;
    },
    text(text) {
      if (inText && current !== undefined && current.length < maxChars) current += text;
    },
    close(name) {
      if (name === 't') inText = false;
      else if (name === 'rPh') inPhonetic = false;
      else if (name === 'si') {
        if (current !== undefined) found.set(index, current.slice(0, maxChars));
        current = undefined;
        if (index >= last) throw new Enough();
      }
    },
  });
  return found;
}

/**
 * The preview of a stored XLSX, reading only what it shows: the zip directory by ranged reads, the first
 * worksheet inflated only up to the rows shown (plus one, to know there are more), then the shared strings
 * streamed only up to the last index those rows use, keeping only those strings, so a preview is cheap
 * whatever the size of the shared strings (no limit needed here; uploads bound them for whole-sheet readers).
 * A workbook that cannot be read (a part that is not well-formed XML or does not unpack, a broken zip) is
 * UnreadableFileError (422), naming the part and the position, never cell values.
 */
export async function previewStoredXlsx(
  client: Minio.Client,
  bucket: string,
  key: string,
  size: number,
  options: PreviewOptions & { sheet?: string },
  limits: Pick<XlsxLimits, 'maxEntries'>,
): Promise<Preview & { sheet: string | null; sheets: string[] }> {
  const reader = new ObjectRangeReader(client, bucket, key, size);
  await reader.loadTail();
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(reader, size);
  } catch {
    throw new UnreadableFileError(`${CANNOT_READ}: its zip structure is broken`);
  }
  try {
    let entries: yauzl.Entry[];
    try {
      entries = await readEntries(zip, limits.maxEntries);
    } catch (err) {
      // the upload's limits are checked again: one lowered since is a 422 here, as a broken directory
      if (err instanceof BadRequestError) throw new UnreadableFileError(`${CANNOT_READ}: ${err.message}`);
      throw new UnreadableFileError(`${CANNOT_READ}: its zip structure is broken`);
    }
    const book = await mapWorkbook(zip, entries, options.sheet);
    const dates = await dateStyles(zip, book.styles);
    const raw = await readRows(
      zip,
      book.sheet,
      options.rows + 2,
      options.maxColumns + 1,
      options.maxCellChars,
      dates,
      book.date1904,
    );
    const moreRows = raw.length > options.rows + 1;
    const shown = raw.slice(0, options.rows + 1);
    const needed = new Set<number>();
    for (const r of shown) {
      for (const c of r) if (c !== null && typeof c === 'object') needed.add(c.shared);
    }
    const strings = book.sharedStrings
      ? await readSharedStrings(zip, book.sharedStrings, needed, options.maxCellChars)
      : new Map<number, string>();
    const table: CellValue[][] = shown.map((r) =>
      r.map((c) => (c !== null && typeof c === 'object' ? (strings.get(c.shared) ?? null) : c)),
    );
    return { ...shapePreview(table, options, moreRows), sheet: book.sheetName, sheets: book.sheetNames };
  } finally {
    zip.close();
  }
}
