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
 * Makes `reader` (a WorkbookReader not started yet) read its shared strings and worksheets through
 * `partText`. Throws when the reader has no such hooks (another ExcelJS version): a load would misread text.
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
  hooks._parseSharedStrings = (entry) => sharedStrings.call(reader, Readable.from(partText(entry)));
  hooks._parseWorksheet = (chunks, sheetNo) => worksheet.call(reader, partText(chunks), sheetNo);
}
