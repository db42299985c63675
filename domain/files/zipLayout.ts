import type { Readable } from 'node:stream';
import type * as yauzl from 'yauzl';
import { BadRequestError } from '../../common/errors';
import type { ObjectRangeReader } from './xlsx';

const LOCAL_HEADER = 0x04034b50;
const LOCAL_HEADER_BYTES = 30;
const DATA_DESCRIPTOR = Buffer.from([0x50, 0x4b, 0x07, 0x08]);
/** A data descriptor as a streaming reader takes it: signature, CRC-32, compressed and unpacked size. */
const DATA_DESCRIPTOR_BYTES = 16;
/** General purpose flag bit 3: sizes (and CRC) follow the data in a data descriptor. */
const SIZES_AFTER_DATA = 0x08;
const ZIP64_EXTRA = 0x0001;

/** The workbook's layout does not let a streaming reader see exactly the entries of its directory. */
function refused(detail: string): BadRequestError {
  return new BadRequestError(`the workbook's zip is refused: ${detail}`);
}

/** The local header's compressed size; a zip64 one (0xFFFFFFFF) from its zip64 extra field, as unzipper reads it. */
function localCompressedSize(header: Buffer, extra: Buffer, name: string): number {
  const size = header.readUInt32LE(18);
  if (size !== 0xffffffff) return size;
  for (let at = 0; at + 4 <= extra.length; at += 4 + extra.readUInt16LE(at + 2)) {
    if (extra.readUInt16LE(at) !== ZIP64_EXTRA) continue;
    // a local zip64 field holds both sizes, unpacked first (APPNOTE 4.5.3)
    if (extra.readUInt16LE(at + 2) < 16 || at + 20 > extra.length) break;
    const big = extra.readBigUInt64LE(at + 12);
    if (big > BigInt(Number.MAX_SAFE_INTEGER)) break;
    return Number(big);
  }
  throw refused(`the local header of ${name} has no valid zip64 sizes`);
}

/**
 * Where the first data-descriptor signature is in bytes [start, end) of the object, or -1: the end of a
 * streamed entry's data as a streaming reader finds it (it searches for the signature).
 */
async function firstDescriptor(reader: ObjectRangeReader, start: number, end: number): Promise<number> {
  const stream: Readable = reader._readStreamForRange(start, end);
  let offset = start;
  let carry = Buffer.alloc(0);
  try {
    for await (const chunk of stream) {
      const text = Buffer.concat([carry, chunk as Buffer]);
      const at = text.indexOf(DATA_DESCRIPTOR);
      if (at >= 0) return offset - carry.length + at;
      carry = text.subarray(Math.max(0, text.length - (DATA_DESCRIPTOR.length - 1)));
      offset += (chunk as Buffer).length;
    }
  } finally {
    stream.destroy();
  }
  return -1;
}

/**
 * Checks that a stored zip's LOCAL entries, read in order from byte 0 as a streaming reader does, are exactly
 * its directory's entries. The guards (sizes, ratio, shared strings, sheets) read the directory (yauzl); the
 * report builds read with ExcelJS's `WorkbookReader`, which walks the local headers (unzipper's `Parse`) and
 * never reads the directory, so an entry present in the file but missing from the directory, or a local
 * header that says other than the directory (name, method, size), would be unpacked by the builds and
 * checked by no guard.
 *
 * So, with the directory's entries in offset order: the first starts at byte 0; each local header matches
 * its directory entry (signature, name, compression method, compressed size — a streamed entry (flag
 * bit 3 and a zero size in the local header) ends at the first data-descriptor signature after its data start, which must be
 * where the directory puts its end); and the next entry — for the last one, the directory — starts exactly
 * where this one ends (header, name, extra field, data, and for a streamed entry its 16-byte descriptor).
 * No bytes are left between them, so nothing else can be read as an entry; the compressed data is never
 * searched for headers (it may hold their bytes by chance), only a streamed entry's for its end, as the
 * streaming reader does.
 *
 * Reads: each local header through `reader.bytes` (from the tail or a 64 KB window, one GET for a run of
 * neighbouring headers), and each streamed entry's data outside memory by one ranged GET, so at most two
 * GETs an entry (the entries are bounded by XLSX_MAX_ENTRIES). Throws BadRequestError (400) naming the
 * problem.
 */
export async function checkLocalEntries(
  reader: ObjectRangeReader,
  entries: yauzl.Entry[],
  directoryStart: number,
): Promise<void> {
  const ordered = [...entries].sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader);
  let expected = 0;
  for (const entry of ordered) {
    const offset = entry.relativeOffsetOfLocalHeader;
    if (offset !== expected) {
      throw refused(
        offset > expected
          ? `bytes ${expected}–${offset - 1} are in no entry of its directory`
          : `the entries ${entry.fileName} and the one before it overlap`,
      );
    }
    const header = await reader.bytes(offset, offset + LOCAL_HEADER_BYTES);
    if (header.length < LOCAL_HEADER_BYTES || header.readUInt32LE(0) !== LOCAL_HEADER) {
      throw refused(`the entry ${entry.fileName} has no local header where its directory says`);
    }
    const nameLength = header.readUInt16LE(26);
    const extraLength = header.readUInt16LE(28);
    const namesAt = offset + LOCAL_HEADER_BYTES;
    const names = await reader.bytes(namesAt, namesAt + nameLength + extraLength);
    if (names.length < nameLength + extraLength) {
      throw refused(`the local header of ${entry.fileName} is cut short`);
    }
    // the streaming reader takes the local name as UTF-8; the guards checked the directory's name
    if (names.subarray(0, nameLength).toString('utf8') !== entry.fileName) {
      throw refused(`the local header of ${entry.fileName} names another part`);
    }
    if (header.readUInt16LE(8) !== entry.compressionMethod) {
      throw refused(`the local header of ${entry.fileName} has another compression method`);
    }
    // only the local flags matter: the streaming reader never sees the directory's
    const flags = header.readUInt16LE(6);
    const dataStart = namesAt + nameLength + extraLength;
    const dataEnd = dataStart + entry.compressedSize;
    const localSize = localCompressedSize(header, names.subarray(nameLength), entry.fileName);
    if (dataEnd > directoryStart) throw refused(`the entry ${entry.fileName} overlaps its directory`);
    if (flags & SIZES_AFTER_DATA && localSize === 0) {
      // streamed: the data ends at the first descriptor signature, which must be the directory's end
      const found = await firstDescriptor(reader, dataStart, dataEnd + DATA_DESCRIPTOR.length);
      if (found !== dataEnd) {
        throw refused(
          `the data of ${entry.fileName} does not end at its data descriptor where its directory says (a streaming reader could not read it)`,
        );
      }
      expected = dataEnd + DATA_DESCRIPTOR_BYTES;
    } else {
      // the size is taken from the local header, and nothing after the data is skipped
      if (localSize !== entry.compressedSize) {
        throw refused(`the local header of ${entry.fileName} gives another compressed size`);
      }
      expected = dataEnd;
    }
  }
  if (directoryStart !== expected) {
    throw refused(
      directoryStart > expected
        ? `bytes ${expected}–${directoryStart - 1} are in no entry of its directory`
        : 'its last entry overlaps its directory',
    );
  }
}
