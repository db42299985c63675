import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/**
 * Where ExcelJS's streaming WorkbookReader (4.4.0) hands a part to its XML parser: the shared strings (the
 * zip entry, a stream) and each worksheet (an iterable of the entry's chunks). Methods of its own, not of its
 * typings: `readPartsAsText` checks they are there.
 */
interface PartHooks {
  _parseSharedStrings: (this: unknown, entry: Readable) => AsyncGenerator<unknown>;
  _parseWorksheet: (
    this: unknown,
    chunks: AsyncIterable<Buffer | string>,
    sheetNo: string,
  ) => Generator<unknown>;
}

/**
 * A part's chunks as text. ExcelJS decodes each chunk of a part on its own, so a character whose UTF-8 bytes
 * are split between two chunks (any non-ASCII character can be) became replacement characters: '東京' read
 * as '��京'. One decoder for the whole part keeps the bytes of a split character for the next chunk.
 */
async function* partText(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    if (text !== '') yield text;
  }
  const rest = decoder.end();
  if (rest !== '') yield rest;
}

/**
 * A string item's content as ExcelJS should read it. ExcelJS's worksheet reader starts an inline string's text
 * anew at each `<t>`, so of `<is><r><t>Hello </t></r><r><t>world</t></r></is>` it kept the last run, 'world';
 * its shared strings reader does so for a string item's phonetic guide, so of `<si><t>東京</t><rPh sb="0"
 * eb="2"><t>トウキョウ</t></rPh></si>` it kept the guide, 'トウキョウ'. An item with runs (or phonetic text, `<rPh>`) becomes one `<t>` holding the text of its `<t>` elements outside
 * `<rPh>`, in order (as the preview reads it); other items stay as they are. Linear in the item: each tag and
 * close tag is searched for once, forward.
 */
function itemXml(content: string): string {
  if (!content.includes('<r')) return content;
  let text = '';
  const tags = /<(t|rPh)\b[^<>]*>/g;
  for (let m = tags.exec(content); m; m = tags.exec(content)) {
    if (m[0].endsWith('/>')) continue;
    const end = content.indexOf(m[1] === 't' ? '</t>' : '</rPh>', tags.lastIndex);
    if (end < 0) break;
    if (m[1] === 't') text += content.slice(tags.lastIndex, end);
    tags.lastIndex = end;
  }
  return `<t xml:space="preserve">${text}</t>`;
}

/**
 * The text with the content of each `<name>` element (`si`: a shared string, `is`: an inline string) rewritten
 * by `itemXml`. An element
 * still open at a chunk's end is held until its close tag comes; the part's end inside one leaves it as it was
 * (the XML parser then tells what is wrong).
 */
async function* plainItems(texts: AsyncIterable<string>, name: string): AsyncGenerator<string> {
  const open = `<${name}>`;
  const close = `</${name}>`;
  let item: string[] | undefined; // the content so far of an element not closed yet
  let carry = ''; // the last characters of a chunk, which may start the tag looked for
  for await (const chunk of texts) {
    const text = carry + chunk;
    carry = '';
    let out = '';
    let at = 0;
    for (;;) {
      const tag = item ? close : open;
      const found = text.indexOf(tag, at);
      if (found < 0) {
        const keep = Math.max(at, text.length - tag.length + 1);
        if (item) item.push(text.slice(at, keep));
        else out += text.slice(at, keep);
        carry = text.slice(keep);
        break;
      }
      if (item) {
        item.push(text.slice(at, found));
        out += open + itemXml(item.join('')) + close;
        item = undefined;
      } else {
        out += text.slice(at, found);
        item = [];
      }
      at = found + tag.length;
    }
    if (out !== '') yield out;
  }
  const rest = (item ? open + item.join('') : '') + carry;
  if (rest !== '') yield rest;
}

const XML_SPACE = new Set([' ', '\n', '\r', '\t']);

/** A cell's `<v>` text (one `<v>` without attributes, as every writer puts it), or undefined. */
function cellV(inner: string): { at: number; end: number; text: string } | undefined {
  const at = inner.indexOf('<v>');
  if (at < 0) return undefined;
  const end = inner.indexOf('</v>', at + 3);
  return end < 0 ? undefined : { at: at + 3, end, text: inner.slice(at + 3, end) };
}

/**
 * The cells ExcelJS's worksheet reader misreads, as text cells (`t="str"`) holding what they show:
 * - a formula with a boolean result (`t="b"`): ExcelJS reads its cached result as a number, 1 or 0, where a
 *   boolean cell without a formula reads as true or false. It becomes `true` or `false` (a plain boolean cell
 *   stays as it is);
 * - an ISO 8601 date cell (`t="d"`, `<v>2024-01-02T10:00:00</v>`), with or without a formula: ExcelJS reads
 *   it as a number (2024). It becomes the text of its date as a date-formatted number cell loads
 *   (`dateCellText`: `2024-01-02`, `2024-01-02 10:00:00`), or stays its text when it is no date.
 * Found by their `t="b"`/`t="d"` attribute (either quote); a cell whose close tag is not in the text yet is
 * held until it comes. Cells without such an attribute are passed on untouched, without a copy.
 */
async function* typedCells(
  texts: AsyncIterable<string>,
  dateCellText: (v: string) => string,
): AsyncGenerator<string> {
  const attr = / t=["']([bd])["']/g;
  let carry = '';
  for await (const chunk of texts) {
    let text = carry + chunk;
    carry = '';
    // a tag not finished in this text (its attributes may be cut) waits for the next chunk
    const lt = text.lastIndexOf('<');
    if (lt >= 0 && text.indexOf('>', lt) < 0) {
      carry = text.slice(lt);
      text = text.slice(0, lt);
    }
    let out = '';
    let at = 0;
    attr.lastIndex = 0;
    for (let m = attr.exec(text); m; m = attr.exec(text)) {
      const kind = m[1];
      const tagEnd = text.indexOf('>', m.index);
      if (text[tagEnd - 1] === '/') continue; // <c … t="b"/>: no value
      // a cell's formula comes first in it (<f>, then <v>; spaces or line breaks may come before): a boolean
      // cell without one is read right, and is passed on at once (most t="b" cells are such)
      let content = tagEnd + 1;
      while (content < text.length && XML_SPACE.has(text[content])) content++;
      const complete = content + 1 < text.length;
      if (kind === 'b' && complete && !text.startsWith('<f', content)) continue;
      const start = text.lastIndexOf('<', m.index);
      // the attribute of a cell's open tag, not of another element or inside a text
      if (start < at || !text.startsWith('<c ', start) || text.lastIndexOf('>', m.index) > start) continue;
      const cellEnd = complete ? text.indexOf('</c>', tagEnd) : -1;
      if (cellEnd < 0) {
        // the cell goes on in the next chunk: keep it whole
        carry = text.slice(start) + carry;
        text = text.slice(0, start);
        break;
      }
      const inner = text.slice(tagEnd + 1, cellEnd);
      const v = cellV(inner);
      attr.lastIndex = cellEnd + 4;
      if (!v) continue;
      const shown =
        kind === 'b'
          ? v.text.trim() === '1' || v.text.trim() === 'true'
            ? 'true'
            : 'false'
          : dateCellText(v.text);
      out +=
        text.slice(at, m.index) +
        ' t="str"' +
        text.slice(m.index + m[0].length, tagEnd + 1) +
        inner.slice(0, v.at) +
        shown +
        inner.slice(v.end) +
        '</c>';
      at = cellEnd + 4;
    }
    if (at === 0) {
      if (text !== '') yield text;
    } else {
      out += text.slice(at);
      yield out;
    }
  }
  if (carry !== '') yield carry;
}

/**
 * Makes `reader` (a WorkbookReader not started yet) read its shared strings and worksheets through
 * `partText`, their string items through `plainItems`, and the worksheets' boolean formulas and ISO date
 * cells through `typedCells` (`dateCellText`: the text of an ISO date cell's value). Throws when the reader has no such hooks (another ExcelJS version): a load would misread text.
 */
export function readPartsAsText(reader: object, dateCellText: (v: string) => string): void {
  const hooks = reader as PartHooks;
  const sharedStrings = hooks._parseSharedStrings;
  const worksheet = hooks._parseWorksheet;
  if (typeof sharedStrings !== 'function' || typeof worksheet !== 'function') {
    throw new Error(
      "ExcelJS's WorkbookReader has no _parseSharedStrings/_parseWorksheet to read parts through",
    );
  }
  hooks._parseSharedStrings = (entry) =>
    sharedStrings.call(reader, Readable.from(plainItems(partText(entry), 'si')));
  hooks._parseWorksheet = (chunks, sheetNo) =>
    worksheet.call(reader, typedCells(plainItems(partText(chunks), 'is'), dateCellText), sheetNo);
}
