/** Upload helpers for the files tests: multipart bodies built by hand, small workbooks, hand-made zips. */
import { randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { call, readResponse, type HttpResponse } from './http';
import { testEnv } from './env';
import type { XlsxLimits } from '../../domain/files/xlsx';

export interface FormPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

/** A multipart/form-data body and its content type. */
export function multipart(parts: FormPart[]): { body: Buffer; contentType: string } {
  const boundary = `----test${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.contentType) head += `Content-Type: ${part.contentType}\r\n`;
    chunks.push(Buffer.from(head + '\r\n'), Buffer.from(part.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface UploadOptions {
  token: string;
  name?: string;
  visibility?: string;
  /** extra form parts */
  extra?: FormPart[];
  /** send without Content-Length (chunked), in pieces of this size */
  chunked?: number;
  baseUrl?: string;
  headers?: Record<string, string>;
}

/** POST a multipart upload (to /files, or /files/:id/versions) as a client would. */
export async function uploadTo(
  path: string,
  data: Buffer | string,
  options: UploadOptions,
): Promise<HttpResponse> {
  const parts: FormPart[] = [{ name: 'file', filename: options.name ?? 'data.csv', data }];
  if (options.visibility) parts.unshift({ name: 'visibility', data: options.visibility });
  parts.push(...(options.extra ?? []));
  const { body, contentType } = multipart(parts);
  if (options.chunked) {
    const url = (options.baseUrl ?? testEnv().baseUrl) + path;
    const headers = {
      ...options.headers,
      authorization: `Bearer ${options.token}`,
      'content-type': contentType,
    };
    const size = options.chunked;
    let offset = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= body.length) {
          controller.close();
          return;
        }
        controller.enqueue(body.subarray(offset, offset + size));
        offset += size;
      },
    });
    try {
      return await readResponse(await fetch(url, { method: 'POST', headers, body: stream, duplex: 'half' }));
    } catch (err) {
      // the server may answer and close before the whole body is sent
      return { status: -1, headers: new Headers(), body: undefined, text: String(err) };
    }
  }
  return call('POST', path, {
    raw: body,
    token: options.token,
    headers: { ...options.headers, 'content-type': contentType },
    baseUrl: options.baseUrl,
  });
}

export function uploadFile(data: Buffer | string, options: UploadOptions): Promise<HttpResponse> {
  return uploadTo('/files', data, options);
}

export function csv(rows: number, columns = 3, seed = 'x'): string {
  const header = Array.from({ length: columns }, (_, i) => `col${i + 1}`).join(',');
  const lines = [header];
  for (let r = 0; r < rows; r++) {
    lines.push(
      Array.from({ length: columns }, (_, c) => (c === 0 ? `${seed}${r}` : String(r * c))).join(','),
    );
  }
  return lines.join('\n') + '\n';
}

/** A small real workbook (exceljs), first sheet `rows` × `columns` plus a header. */
export async function xlsx(rows: number, columns = 3, sheetName = 'Data'): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet(sheetName);
  sheet.addRow(Array.from({ length: columns }, (_, i) => `col${i + 1}`));
  for (let r = 0; r < rows; r++)
    sheet.addRow(Array.from({ length: columns }, (_, c) => (c === 0 ? `r${r}` : r * c)));
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

export interface ZipEntry {
  name: string;
  data: Buffer | string;
  store?: boolean;
  /** written as a streaming writer does: flag bit 3, zero CRC and sizes locally, a 16-byte data descriptor */
  descriptor?: boolean;
  /** a local entry only, left out of the directory (a hostile zip) */
  hidden?: boolean;
  /** the local header says other than the directory (a hostile zip) */
  local?: { name?: string; method?: number; compressedSize?: number; zip64?: boolean };
  /** the directory says another unpacked size (a hostile zip) */
  declaredSize?: number;
}

/** A zip written by hand (deflate), to build broken and hostile workbooks. */
export function zip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const raw = Buffer.from(entry.data);
    const data = entry.store ? raw : deflateRawSync(raw);
    const name = Buffer.from(entry.name);
    const localName = Buffer.from(entry.local?.name ?? entry.name);
    const method = entry.store ? 0 : 8;
    const crc = crc32(raw);
    // zip64 local sizes: 0xFFFFFFFF in the header, both sizes in a zip64 extra field (unpacked first)
    const extra = Buffer.alloc(entry.local?.zip64 ? 20 : 0);
    if (entry.local?.zip64) {
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(16, 2);
      extra.writeBigUInt64LE(BigInt(raw.length), 4);
      extra.writeBigUInt64LE(BigInt(entry.local.compressedSize ?? data.length), 12);
    }
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.descriptor ? 0x08 : 0, 6);
    local.writeUInt16LE(entry.local?.method ?? method, 8);
    if (!entry.descriptor) {
      local.writeUInt32LE(crc, 14);
      local.writeUInt32LE(entry.local?.zip64 ? 0xffffffff : (entry.local?.compressedSize ?? data.length), 18);
      local.writeUInt32LE(entry.local?.zip64 ? 0xffffffff : raw.length, 22);
    }
    local.writeUInt16LE(localName.length, 26);
    local.writeUInt16LE(extra.length, 28);
    const descriptor = Buffer.alloc(entry.descriptor ? 16 : 0);
    if (entry.descriptor) {
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc, 4);
      descriptor.writeUInt32LE(data.length, 8);
      descriptor.writeUInt32LE(raw.length, 12);
    }
    if (!entry.hidden) {
      const central = Buffer.alloc(46);
      central.writeUInt32LE(0x02014b50, 0);
      central.writeUInt16LE(20, 4);
      central.writeUInt16LE(20, 6);
      central.writeUInt16LE(entry.descriptor ? 0x08 : 0, 8);
      central.writeUInt16LE(method, 10);
      central.writeUInt32LE(crc, 16);
      central.writeUInt32LE(data.length, 20);
      central.writeUInt32LE(entry.declaredSize ?? raw.length, 24);
      central.writeUInt16LE(name.length, 28);
      central.writeUInt32LE(offset, 42);
      centrals.push(central, name);
    }
    locals.push(local, localName, extra, data, descriptor);
    offset += local.length + localName.length + extra.length + data.length + descriptor.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let crc = 0xffffffff;
  for (let i = 0; i < buf.length; i++) crc = CRC_TABLE[(crc ^ buf[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export const CONTENT_TYPES_XML =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"></Types>';
export const WORKBOOK_XML =
  '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>';

export function sheetXml(dimension: string | null, body = ''): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
    (dimension ? `<dimension ref="${dimension}"/>` : '') +
    `<sheetData>${body}</sheetData></worksheet>`
  );
}

/**
 * A workbook whose shared strings (`count` strings, ~3.4 MB unpacked for 100,000) are a local zip entry left
 * out of the zip directory: the directory shows a workbook without shared strings; a reader of the local
 * entries in order (ExcelJS's `WorkbookReader`) reads them.
 */
export function hiddenSharedStringsWorkbook(count = 100_000): Buffer {
  const strings = Array.from({ length: count }, (_, i) => `<si><t>hidden value ${i}</t></si>`).join('');
  return zip([
    { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
    { name: 'xl/workbook.xml', data: WORKBOOK_XML },
    { name: 'xl/sharedStrings.xml', data: `<sst count="${count}">${strings}</sst>`, hidden: true },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: sheetXml(
        'A1:A2',
        '<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2"><v>1</v></c></row>',
      ),
    },
  ]);
}

/** A workbook of one sheet, `name`, whose worksheet part is `sheet` (XML), with a styles part when given. */
export function oneSheetWorkbook(name: string, sheet: string, styles?: string): Buffer {
  const type = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  return zip([
    { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
    {
      name: 'xl/workbook.xml',
      data:
        `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${type}">` +
        `<sheets><sheet name="${name}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data:
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        `<Relationship Id="rId1" Type="${type}/worksheet" Target="worksheets/sheet1.xml"/>` +
        (styles ? `<Relationship Id="rId2" Type="${type}/styles" Target="styles.xml"/>` : '') +
        '</Relationships>',
    },
    ...(styles ? [{ name: 'xl/styles.xml', data: styles }] : []),
    { name: 'xl/worksheets/sheet1.xml', data: sheet },
  ]);
}

/**
 * A workbook that opens on a chart sheet: it lists `Chart1` (a chart sheet: no cells, its part under
 * xl/chartsheets/) and then `Data` (a worksheet: a header `name` and the rows `a`, `b`).
 */
export function chartSheetWorkbook(): Buffer {
  const type = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const cell = (r: string, t: string) => `<c r="${r}" t="inlineStr"><is><t>${t}</t></is></c>`;
  return zip([
    { name: '[Content_Types].xml', data: CONTENT_TYPES_XML },
    {
      name: 'xl/workbook.xml',
      data:
        `<workbook xmlns="${main}" xmlns:r="${type}"><sheets>` +
        '<sheet name="Chart1" sheetId="2" r:id="rId2"/><sheet name="Data" sheetId="1" r:id="rId1"/>' +
        '</sheets></workbook>',
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data:
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        `<Relationship Id="rId1" Type="${type}/worksheet" Target="worksheets/sheet1.xml"/>` +
        `<Relationship Id="rId2" Type="${type}/chartsheet" Target="chartsheets/sheet1.xml"/>` +
        '</Relationships>',
    },
    {
      name: 'xl/chartsheets/sheet1.xml',
      data: `<chartsheet xmlns="${main}" xmlns:r="${type}"><sheetViews><sheetView workbookViewId="0"/></sheetViews><drawing r:id="rId1"/></chartsheet>`,
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: sheetXml(
        'A1:A3',
        `<row r="1">${cell('A1', 'name')}</row><row r="2">${cell('A2', 'a')}</row><row r="3">${cell('A3', 'b')}</row>`,
      ),
    },
  ]);
}

/** Every object stored under the run's prefix for one company. */
export async function objectsOf(companyId: string): Promise<string[]> {
  const { storage } = testEnv();
  const names: string[] = [];
  const stream = storage.client.listObjectsV2(storage.bucket, storage.key('files', companyId) + '/', true);
  for await (const item of stream as AsyncIterable<{ name?: string }>) if (item.name) names.push(item.name);
  return names;
}

/** Multipart uploads never completed for these exact keys (MinIO lists them per exact key only). */
export async function incompleteUploadsAt(keys: Iterable<string>): Promise<string[]> {
  const { storage } = testEnv();
  const found: string[] = [];
  for (const key of new Set(keys)) {
    const stream = storage.client.listIncompleteUploads(storage.bucket, key, true);
    try {
      for await (const item of stream as AsyncIterable<{ key?: string }>) if (item.key) found.push(item.key);
    } catch (err) {
      // the listing reads each upload's parts: an upload aborted between the two calls is gone, not an error
      if ((err as { code?: string }).code !== 'NoSuchUpload') throw err;
    }
  }
  return found;
}

/** Rows, events and usage a company has: what an upload that failed must leave untouched. */
export async function footprint(companyId: string) {
  const { knex } = testEnv();
  const count = async (table: string) =>
    Number(((await knex(table).where({ companyId }).count({ n: '*' }).first()) as { n: string }).n);
  const usage = (await knex('fileUsage').where({ companyId }).sum({ n: 'filesUsed' }).first()) as {
    n: string | null;
  };
  return {
    files: await count('files'),
    versions: await count('fileVersions'),
    datasets: await count('datasets'),
    events: await count('outbox'),
    filesUsed: Number(usage.n ?? 0),
    objects: (await objectsOf(companyId)).length,
  };
}

/** A second company's caller sees none of these files: not in its list, 404 on each (and its versions). */
export async function expectHiddenFrom(token: string, fileIds: string[]): Promise<void> {
  const list = await call('GET', '/files?limit=100', { token });
  const leaked = (list.body.data as Array<{ id: string }>).filter((f) => fileIds.includes(f.id));
  if (list.status !== 200 || leaked.length > 0)
    throw new Error(`files leaked to another company: ${list.text}`);
  for (const id of fileIds) {
    for (const path of [`/files/${id}`, `/files/${id}/versions`]) {
      const res = await call('GET', path, { token });
      if (res.status !== 404) throw new Error(`GET ${path} answered ${res.status} to another company`);
    }
  }
}

/** The XLSX guards' limits at their defaults, for tests that call the inspection directly. */
export const XLSX_TEST_LIMITS: XlsxLimits = {
  maxUnpackedBytes: 400 * 1024 * 1024,
  maxEntries: 1000,
  maxCompressionRatio: 100,
  maxRows: 1_048_576,
  maxColumns: 1024,
  maxSharedStringsBytes: 64 * 1024 * 1024,
  maxSharedStrings: 1_000_000,
};

/** Puts `data` into this run's bucket under `<prefix>/<name>` (tests that read stored objects directly). */
export async function storeObject(
  prefix: string,
  name: string,
  data: Buffer,
): Promise<{ key: string; size: number }> {
  const { storage } = testEnv();
  const key = storage.key(prefix, name);
  await storage.client.putObject(storage.bucket, key, data, data.length);
  return { key, size: data.length };
}

/**
 * Invoices of two rows, in a 1900 or a 1904 workbook: an issue date, a due date (`=A+30`, formatted as a
 * date), a reminder (`=B+0.4375`, formatted as a date and time), and a fourth column given by the test (its
 * header, its value for the row, its number format): what the preview and the report engine must both read
 * as dates.
 */
export function invoiceWorkbook(
  date1904: boolean,
  fourth: { header: string; value: (row: number) => ExcelJS.CellValue; numFmt: string },
): ExcelJS.Workbook {
  const workbook = new ExcelJS.Workbook();
  workbook.properties.date1904 = date1904;
  const sheet = workbook.addWorksheet('Invoices');
  sheet.addRow(['issued', 'due', 'reminder', fourth.header]);
  for (const [i, day] of [1, 15].entries()) {
    const r = i + 2;
    const row = sheet.addRow([
      new Date(Date.UTC(2024, 0, day)),
      { formula: `A${r}+30`, result: new Date(Date.UTC(2024, 0, day + 30)) },
      { formula: `B${r}+0.4375`, result: new Date(Date.UTC(2024, 0, day + 30, 10, 30)) },
      fourth.value(r),
    ]);
    row.getCell(1).numFmt = 'yyyy-mm-dd';
    row.getCell(2).numFmt = 'dd/mm/yyyy';
    row.getCell(3).numFmt = '[$-409]yyyy-mm-dd hh:mm;@';
    row.getCell(4).numFmt = fourth.numFmt;
  }
  return workbook;
}
