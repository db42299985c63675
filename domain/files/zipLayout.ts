import type { Readable } from 'node:stream';
import type * as Minio from 'minio';
import type * as yauzl from 'yauzl';
import { BadRequestError } from '../../common/errors';

const LOCAL_HEADER = 0x04034b50;
const DIRECTORY_HEADER = 0x02014b50;
const DATA_DESCRIPTOR = Buffer.from([0x50, 0x4b, 0x07, 0x08]);
/** A data descriptor as a streaming reader takes it: signature, CRC-32, compressed and unpacked size. */
const DATA_DESCRIPTOR_BYTES = 16;
/** General purpose flag bit 3: sizes (and CRC) follow the data in a data descriptor. */
const SIZES_AFTER_DATA = 0x08;
const ZIP64_EXTRA = 0x0001;

/** A local entry as a streaming reader finds it. */
export interface LocalEntry {
  /** byte offset of its local header */
  offset: number;
  /** its local name, read as UTF-8 (as unzipper reads it) */
  name: string;
  method: number;
  /** bytes of data the reader takes: the local header's size, or up to the descriptor for a streamed entry */
  compressedSize: number;
  /** flag bit 3 and a zero size: the data ends at the first data-descriptor signature */
  streamed: boolean;
}

type State = 'signature' | 'header' | 'names' | 'skip' | 'scan' | 'descriptor' | 'done';

/**
 * Walks a zip's LOCAL entries from byte 0, fed chunk by chunk, exactly as a streaming reader (ExcelJS's
 * `WorkbookReader` over unzipper's `Parse`, the report builds' reader until they read through the directory)
 * does: a local header, its name and extra field, then data
 * of the size its local header gives (zip64: from its zip64 field) — or, for a streamed entry (flag bit 3 and
 * a zero size), data up to the first data-descriptor signature and a 16-byte descriptor — then the next
 * signature, until the directory's first header. Keeps the entries found (at most `maxEntries`), a few bytes
 * of carry and at most one header; never searches data for headers. `checkLocalEntries` compares the walk
 * with the zip directory the guards read.
 */
export class LocalEntryWalk {
  readonly entries: LocalEntry[] = [];
  /** where the walk met the directory's first header */
  directoryAt: number | undefined;
  /** why the walk stopped before the directory (where a streaming reader would fail, or too many entries) */
  failure: string | undefined;
  private state: State = 'signature';
  /** absolute offset of the next byte fed */
  private pos = 0;
  /** where the current buffered record (signature, header, names, descriptor) starts */
  private mark = 0;
  private need = 4;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private remaining = 0;
  private carry: Buffer = Buffer.alloc(0);
  private current:
    | { offset: number; flags: number; method: number; size: number; nameLength: number; extraLength: number }
    | undefined;
  private name = '';
  private dataStart = 0;

  constructor(private readonly maxEntries: number) {}

  get done(): boolean {
    return this.state === 'done';
  }

  feed(chunk: Buffer): void {
    let at = 0;
    while (this.state !== 'done') {
      if (this.state === 'skip') {
        if (this.remaining === 0) {
          this.finishEntry(this.current!.size, false);
          continue;
        }
        if (at >= chunk.length) return;
        const take = Math.min(this.remaining, chunk.length - at);
        this.remaining -= take;
        at += take;
        this.pos += take;
      } else if (this.state === 'scan') {
        if (at >= chunk.length) return;
        at = this.scan(chunk, at);
      } else {
        if (this.heldBytes < this.need) {
          if (at >= chunk.length) return;
          const take = Math.min(this.need - this.heldBytes, chunk.length - at);
          this.held.push(chunk.subarray(at, at + take));
          this.heldBytes += take;
          at += take;
          this.pos += take;
          if (this.heldBytes < this.need) return;
        }
        const record = this.held.length === 1 ? this.held[0] : Buffer.concat(this.held);
        this.held = [];
        this.heldBytes = 0;
        this.record(record);
      }
    }
  }

  /** The object has ended: a walk that has not met the directory by now fails. */
  end(): void {
    if (this.state !== 'done') this.stop('the zip ends before its directory');
  }

  private stop(failure: string): void {
    this.failure = failure;
    this.state = 'done';
  }

  private expect(state: State, need: number): void {
    this.state = state;
    this.need = need;
    this.mark = this.pos;
  }

  private record(bytes: Buffer): void {
    switch (this.state) {
      case 'signature': {
        const signature = bytes.readUInt32LE(0);
        if (signature === DIRECTORY_HEADER) {
          this.directoryAt = this.mark;
          this.state = 'done';
        } else if (signature !== LOCAL_HEADER) {
          this.stop(`the bytes at ${this.mark} are neither a zip entry nor its directory`);
        } else if (this.entries.length >= this.maxEntries) {
          this.stop(`it has more than ${this.maxEntries} local entries`);
        } else {
          const offset = this.mark;
          this.expect('header', 26);
          this.mark = offset;
        }
        return;
      }
      case 'header':
        // the 26 bytes after the signature
        this.current = {
          offset: this.mark,
          flags: bytes.readUInt16LE(2),
          method: bytes.readUInt16LE(4),
          size: bytes.readUInt32LE(14),
          nameLength: bytes.readUInt16LE(22),
          extraLength: bytes.readUInt16LE(24),
        };
        this.state = 'names';
        this.need = this.current.nameLength + this.current.extraLength;
        return;
      case 'names': {
        const entry = this.current!;
        this.name = bytes.subarray(0, entry.nameLength).toString('utf8');
        if (entry.size === 0xffffffff) {
          const size = zip64Size(bytes.subarray(entry.nameLength));
          if (size === undefined) {
            this.stop(`the local header of ${this.name} has no valid zip64 sizes`);
            return;
          }
          entry.size = size;
        }
        this.dataStart = this.pos;
        if (entry.flags & SIZES_AFTER_DATA && entry.size === 0) {
          this.state = 'scan';
          this.carry = Buffer.alloc(0);
        } else {
          this.state = 'skip';
          this.remaining = entry.size;
        }
        return;
      }
      case 'descriptor':
        this.expect('signature', 4);
        return;
    }
  }

  private finishEntry(size: number, streamed: boolean): void {
    const entry = this.current!;
    this.entries.push({
      offset: entry.offset,
      name: this.name,
      method: entry.method,
      compressedSize: size,
      streamed,
    });
    if (streamed) this.expect('descriptor', DATA_DESCRIPTOR_BYTES);
    else this.expect('signature', 4);
  }

  /** Searches a streamed entry's data for the descriptor signature; returns where the chunk was read to. */
  private scan(chunk: Buffer, at: number): number {
    const rest = chunk.subarray(at);
    // a signature cut between chunks: the carry (at most 3 bytes) and the first bytes of this one; `found`
    // is relative to `rest` (negative: it starts in the carry)
    let found: number | undefined;
    if (this.carry.length > 0) {
      const seam = Buffer.concat([this.carry, rest.subarray(0, DATA_DESCRIPTOR.length - 1)]).indexOf(
        DATA_DESCRIPTOR,
      );
      if (seam >= 0) found = seam - this.carry.length;
    }
    if (found === undefined) {
      const inside = rest.indexOf(DATA_DESCRIPTOR);
      if (inside >= 0) found = inside;
    }
    if (found === undefined) {
      const keep = DATA_DESCRIPTOR.length - 1;
      const tail =
        rest.length >= keep ? rest.subarray(-keep) : Buffer.concat([this.carry, rest]).subarray(-keep);
      this.carry = Buffer.from(tail);
      this.pos += rest.length;
      return chunk.length;
    }
    // the data ends where the signature starts (`found` < 0: inside the carry)
    const signatureAt = this.pos + found;
    const fromCarry = found < 0 ? this.carry.subarray(this.carry.length + found) : Buffer.alloc(0);
    this.carry = Buffer.alloc(0);
    this.finishEntry(signatureAt - this.dataStart, true);
    this.mark = signatureAt;
    if (fromCarry.length > 0) {
      this.held = [Buffer.from(fromCarry)];
      this.heldBytes = fromCarry.length;
    }
    const consumed = Math.max(0, found);
    this.pos += consumed;
    return at + consumed;
  }
}

/** The compressed size in a local zip64 extra field, read where unzipper reads it (after the unpacked size). */
function zip64Size(extra: Buffer): number | undefined {
  for (let at = 0; at + 4 <= extra.length; at += 4 + extra.readUInt16LE(at + 2)) {
    if (extra.readUInt16LE(at) !== ZIP64_EXTRA) continue;
    if (at + 20 > extra.length) return undefined;
    const size = extra.readBigUInt64LE(at + 12);
    return size > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(size);
  }
  return undefined;
}

/** Walks a zip's local entries from the start of `stream` (the stored object, a local copy) until the walk is done. */
export async function walkStream(stream: Readable, maxEntries: number): Promise<LocalEntryWalk> {
  const walk = new LocalEntryWalk(maxEntries);
  try {
    for await (const chunk of stream) {
      walk.feed(chunk as Buffer);
      if (walk.done) break;
    }
  } finally {
    stream.destroy();
  }
  walk.end();
  return walk;
}

/** Walks a stored object's local entries, reading it from the start until the walk is done. */
export async function walkStoredObject(
  client: Minio.Client,
  bucket: string,
  key: string,
  maxEntries: number,
): Promise<LocalEntryWalk> {
  return walkStream(await client.getObject(bucket, key), maxEntries);
}

/** The workbook's local entries do not let a streaming reader see exactly the entries of its directory. */
function refused(detail: string): BadRequestError {
  return new BadRequestError(`the workbook's zip is refused: ${detail}`);
}

/**
 * Checks that a zip's LOCAL entries, as a streaming reader walks them (`LocalEntryWalk`), are exactly its
 * directory's entries. The guards (sizes, ratio, shared strings, sheets) and the service's readers
 * (./xlsxRead.ts) read the directory (yauzl); a streaming reader (ExcelJS's `WorkbookReader`, other tools a
 * company opens the file with) walks the local entries and never reads the directory, so an entry present in the
 * file but missing from the directory, or a local header that says other than the directory (name, method,
 * size), would be read by such a reader as a file other than the one the service checked and analysed.
 *
 * So: the walk reaches the directory where the zip says it starts, and meets exactly the directory's
 * entries in offset order, each at its offset with its name, compression method and compressed size. The
 * walk goes from each entry's end straight to the next, so no bytes are left where anything else could be
 * read. Throws BadRequestError (400) naming the problem.
 */
export function checkLocalEntries(
  walk: LocalEntryWalk,
  entries: yauzl.Entry[],
  directoryStart: number,
): void {
  const ordered = [...entries].sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader);
  for (let i = 0; i < Math.max(ordered.length, walk.entries.length); i++) {
    const local = walk.entries[i];
    const listed = ordered[i];
    if (!local) {
      throw refused(
        walk.failure ?? `the entry ${listed.fileName} is not where a reader of the local entries finds one`,
      );
    }
    if (!listed || local.offset < listed.relativeOffsetOfLocalHeader) {
      throw refused(`the local entry ${local.name} at byte ${local.offset} is not in its directory`);
    }
    if (local.offset !== listed.relativeOffsetOfLocalHeader) {
      throw refused(`the entry ${listed.fileName} is not where a reader of the local entries finds one`);
    }
    if (local.name !== listed.fileName) {
      throw refused(`the local header of ${listed.fileName} names another part`);
    }
    if (local.method !== listed.compressionMethod) {
      throw refused(`the local header of ${listed.fileName} has another compression method`);
    }
    if (local.compressedSize !== listed.compressedSize) {
      throw refused(
        local.streamed
          ? `the data of ${listed.fileName} does not end at its data descriptor where its directory says (a streaming reader could not read it)`
          : `the local header of ${listed.fileName} gives another compressed size`,
      );
    }
  }
  if (walk.failure) throw refused(walk.failure);
  if (walk.directoryAt !== directoryStart) {
    throw refused(
      `its directory starts at byte ${directoryStart}, its local entries end at ${walk.directoryAt}`,
    );
  }
}
