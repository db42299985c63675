import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import type * as yauzl from 'yauzl';
import { UnreadableFileError } from './unreadable';
import { isSharedStringsPart, openEntry } from './xlsx';
import { builtinDateStyle, dateFormatStyle, type DateStyle } from './xlsxDates';

/*
 * Reading an XLSX workbook's parts through its zip directory (yauzl) and a SAX parser (saxes): where its sheets
 * and shared parts are, which styles show dates, its shared strings and its worksheets' cells. The preview
 * (./xlsxPreview.ts) and the report engine's loader (../reports/engine/load.ts) both read by these, so both
 * find the same sheets under the same names and read the same cells.
 */

/** Small parts (workbook, relationships, styles) read whole; a larger one is ignored as if absent. */
const SMALL_PART_BYTES = 8 * 1024 * 1024;
/** Set when a reader has seen all it needs: the stream is left there. */
export class Enough extends Error {}

export const CANNOT_READ = 'the workbook cannot be read';

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
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

/**
 * Feeds an entry's XML to a SAX parser chunk by chunk until the handlers say they have enough (they throw
 * Enough) or the part ends. Nothing but the parser's state and what the handlers keep is held. What else a
 * handler throws (a limit reached, an abort) is passed on as it is. The handlers are the parser's own (no
 * wrapper between: they run once per element and text of a sheet); a close handler gets the tag's name.
 */
async function scanXml(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  on: {
    open?: (tag: SaxesTagPlain) => void;
    close?: (tag: { name: string }) => void;
    text?: (text: string) => void;
  },
): Promise<void> {
  const parser = new SaxesParser();
  if (on.open) parser.on('opentag', on.open);
  if (on.close) parser.on('closetag', on.close);
  if (on.text) {
    parser.on('text', on.text);
    parser.on('cdata', on.text);
  }
  // saxes fails on XML that is not well-formed (an undefined entity, a mismatched close tag, &#0;) through its
  // error handler; its message may quote the document, so only the part and the position are told
  let malformed = false;
  parser.on('error', (err) => {
    malformed = true;
    throw err;
  });
  const write = (text: string, end = false) => {
    try {
      parser.write(text);
      if (end) parser.close();
    } catch (err) {
      if (!malformed) throw err;
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

/**
 * An attribute's value in a start tag, as XML allows it written: in double or single quotes, spaces around `=`
 * (`name='Sheet1'` as some writers put it). Only the attribute without a prefix (`id`, not `r:id`).
 */
function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(tag);
  return m ? (m[1] ?? m[2]) : undefined;
}

/** A `<sheet>` tag's relationship id: its `id` attribute in the relationships namespace, whatever its prefix. */
function relationshipId(tag: string): string | undefined {
  const m = /\s[\w.-]+:id\s*=\s*(?:"([^"]*)"|'([^']*)')/.exec(tag);
  return m ? (m[1] ?? m[2]) : undefined;
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

/** Where a workbook's sheets and shared parts are: what the preview and the report loader both read by. */
export interface WorkbookLayout {
  /**
   * the sheets the workbook lists, in its order, each with its worksheet part (none if its relationship leads
   * nowhere or to a sheet without cells: a chart sheet, a dialog sheet, whose `cells` is false)
   */
  sheets: Array<{ name: string; part: yauzl.Entry | undefined; cells: boolean }>;
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
  // the workbook's list of sheets, in order: each tag's name and relationship id. A chart sheet or a dialog
  // sheet (a relationship of another type) has no cells: no part
  const sheets = [...elementContent(workbook, 'sheets').matchAll(/<(?:\w+:)?sheet\b[^<>]*>/g)].map((m) => {
    const id = relationshipId(m[0]);
    const rel = id ? targets.get(id) : undefined;
    const cells = rel !== undefined && (rel.type === '' || rel.type.endsWith('/worksheet'));
    return { name: xmlText(attr(m[0], 'name') ?? ''), part: cells ? partOf(rel) : undefined, cells };
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
    date1904: ['1', 'true'].includes(
      attr(/<(?:\w+:)?workbookPr\b[^<>]*>/.exec(workbook)?.[0] ?? '', 'date1904') ?? '',
    ),
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
 * Which cell styles (the `s` attribute, an index into cellXfs) show dates or times, and what each shows
 * (`DateStyle`: a date, a time of day, a duration). The styles part is scanned with
 * patterns that cannot run past a `<` or `>` (`[^<>]*`, not `[^>]*`), so a part of unclosed tags is read in
 * linear time (a 1 MB part of `<numFmt ` took minutes with `[^>]*`).
 */
export async function dateStyles(
  zip: yauzl.ZipFile,
  styles: yauzl.Entry | undefined,
): Promise<Map<number, DateStyle>> {
  const xml = await smallPart(zip, styles);
  const dates = new Map<number, DateStyle>();
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
    const style = code !== undefined ? dateFormatStyle(code) : builtinDateStyle(id);
    if (style) dates.set(index, style);
    index++;
  }
  return dates;
}

/**
 * Streams the shared strings (`<si>` elements, counted from 0): each one `wanted` names is handed to `found` as
 * its text (its `<t>` elements outside phonetic guides, `<rPh>`, in order, as a spreadsheet shows it; cut at
 * maxChars), and the part is left after string `last`. Memory holds one string at a time besides what `found`
 * keeps.
 */
export async function readSharedStrings(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  wanted: (index: number) => boolean,
  found: (index: number, text: string) => void,
  last = Infinity,
  maxChars = Infinity,
): Promise<void> {
  let index = -1;
  let current: string | undefined;
  let inText = false;
  let inPhonetic = false;
  await scanXml(zip, entry, {
    open(tag) {
      const name = localName(tag.name);
      if (name === 'si') {
        index++;
        current = wanted(index) ? '' : undefined;
      } else if (name === 'rPh') inPhonetic = true;
      else if (name === 't' && !inPhonetic) inText = true;
    },
    text(text) {
      if (inText && current !== undefined && current.length < maxChars) current += text;
    },
    close(tag) {
      const name = localName(tag.name);
      if (name === 't') inText = false;
      else if (name === 'rPh') inPhonetic = false;
      else if (name === 'si') {
        if (current !== undefined)
          found(index, current.length > maxChars ? current.slice(0, maxChars) : current);
        current = undefined;
        if (index >= last) throw new Enough();
      }
    },
  });
}

/** One cell of a worksheet as written (a `<c>` element), to be read as its reader needs. */
export interface SheetCell {
  /** its column, 0 for A: by its reference (`r`), else the one after the row's cell before it */
  col: number;
  /** its type (`t`): n (a number, the default), s (a shared string), str, inlineStr, b, e (an error) or d (ISO 8601) */
  type: string;
  /** its style (`s`), an index into the styles' cellXfs; 0 without one */
  style: number;
  /** the text of its value (`<v>`), at most about maxChars; '' without one */
  v: string;
  /** whether it has a value element (`<v>`) */
  hasValue: boolean;
  /** the text of its inline string (`<is>`): its `<t>` elements outside phonetic guides (`<rPh>`), in order */
  inline: string;
  /** whether it has a formula (`<f>`): its value is then the formula's saved result */
  formula: boolean;
}

/** A cell reference's column (`AB12`: 27, from 0), or -1 when it starts with no letter. */
function refColumn(ref: string): number {
  let col = 0;
  let i = 0;
  for (; i < ref.length; i++) {
    const code = ref.charCodeAt(i) | 0x20; // lower case
    if (code < 0x61 || code > 0x7a) break;
    col = col * 26 + (code - 0x60);
  }
  return i === 0 ? -1 : col - 1;
}

/**
 * Streams a worksheet's rows (`<row>` elements of its `<sheetData>`) to `onRow`, each with its number (`r`, else
 * the one after the row before it) and its cells in the order written; leaves the part after `</sheetData>`.
 * `onRow` may throw Enough to stop there. A cell's texts are kept up to about maxChars.
 */
export async function readSheetRows(
  zip: yauzl.ZipFile,
  sheet: yauzl.Entry,
  onRow: (number: number, cells: SheetCell[]) => void,
  maxChars = Infinity,
): Promise<void> {
  let cells: SheetCell[] | undefined;
  let number = 0;
  let next = 0; // the column of a cell without a reference
  let cell: SheetCell | undefined;
  let inValue = false;
  let inText = false;
  let inPhonetic = false;
  await scanXml(zip, sheet, {
    open(tag) {
      switch (localName(tag.name)) {
        case 'row': {
          const r = Number(tag.attributes.r);
          number = Number.isSafeInteger(r) && r > 0 ? r : number + 1;
          cells = [];
          next = 0;
          break;
        }
        case 'c': {
          if (!cells) break;
          const ref = tag.attributes.r;
          const referenced = ref === undefined ? -1 : refColumn(ref);
          const col = referenced >= 0 ? referenced : next;
          next = col + 1;
          const s = tag.attributes.s;
          cell = {
            col,
            type: tag.attributes.t ?? 'n',
            style: s === undefined ? 0 : Number(s),
            v: '',
            hasValue: false,
            inline: '',
            formula: false,
          };
          break;
        }
        case 'v':
          if (cell) {
            inValue = true;
            cell.hasValue = true;
          }
          break;
        case 'f':
          if (cell) cell.formula = true;
          break;
        case 'rPh':
          inPhonetic = true;
          break;
        case 't':
          if (cell && !inPhonetic) inText = true;
          break;
      }
    },
    text(text) {
      if (!cell) return;
      if (inValue) {
        if (cell.v.length <= maxChars) cell.v += text;
      } else if (inText && cell.inline.length <= maxChars) cell.inline += text;
    },
    close(tag) {
      switch (localName(tag.name)) {
        case 'v':
          inValue = false;
          break;
        case 't':
          inText = false;
          break;
        case 'rPh':
          inPhonetic = false;
          break;
        case 'c':
          if (cell && cells) cells.push(cell);
          cell = undefined;
          break;
        case 'row':
          if (cells) onRow(number, cells);
          cells = undefined;
          break;
        case 'sheetData':
          throw new Enough();
      }
    },
  });
}
