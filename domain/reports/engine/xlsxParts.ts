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

/**
 * Makes `reader` (a WorkbookReader not started yet) read its shared strings and worksheets through
 * `partText`, and their string items through `plainItems`. Throws when the reader has no such hooks (another ExcelJS version): a load would misread text.
 */
export function readPartsAsText(reader: object): void {
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
    worksheet.call(reader, plainItems(partText(chunks), 'is'), sheetNo);
}
