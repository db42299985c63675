/**
 * The XLSX parse of a report build, in a worker thread (./load.ts starts it): ExcelJS's streaming
 * `WorkbookReader` runs here while the build's thread converts the cells and appends them to DuckDB, so the
 * two cores both work (the parse is the floor of an XLSX build).
 *
 * Messages in: `{type: 'chunk', data}` (the file's bytes, in order), `{type: 'end'}`, `{type: 'ack'}` (a
 * batch was appended). Out: `{type: 'rows', rows, bytes}` (a batch: row number, then the row's ExcelJS
 * values, for each row; `bytes` of the file consumed so far), `{type: 'sheetEnd', name}`, `{type: 'done'}`,
 * `{type: 'error', message}`. At most MAX_IN_FLIGHT batches wait for their ack, so memory stays bounded when
 * the appends fall behind.
 */
import { Readable } from 'node:stream';
import { parentPort } from 'node:worker_threads';
import ExcelJS from 'exceljs';

/** rows per batch */
export const XLSX_BATCH_ROWS = 2000;
const MAX_IN_FLIGHT = 8;

export type ToXlsxWorker = { type: 'chunk'; data: Uint8Array } | { type: 'end' } | { type: 'ack' };
export type FromXlsxWorker =
  | { type: 'rows'; rows: unknown[]; bytes: number }
  | { type: 'sheetEnd'; name: string | null }
  | { type: 'done' }
  | { type: 'error'; message: string };

function run(port: NonNullable<typeof parentPort>): void {
  const input = new Readable({ read() {} });
  let bytes = 0;
  let inFlight = 0;
  let wake: (() => void) | null = null;
  port.on('message', (m: ToXlsxWorker) => {
    if (m.type === 'chunk') input.push(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength));
    else if (m.type === 'end') input.push(null);
    else {
      inFlight--;
      const w = wake;
      wake = null;
      w?.();
    }
  });
  input.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  const post = (m: FromXlsxWorker) => port.postMessage(m);
  const send = async (rows: unknown[]) => {
    inFlight++;
    post({ type: 'rows', rows, bytes });
    while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => (wake = resolve));
  };
  const parse = async () => {
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
      worksheets: 'emit',
      sharedStrings: 'cache',
      hyperlinks: 'ignore',
      styles: 'cache', // number formats tell dates from numbers
      entries: 'ignore',
    });
    for await (const worksheet of reader) {
      let batch: unknown[] = [];
      for await (const row of worksheet) {
        batch.push(row.number, row.values);
        if (batch.length >= 2 * XLSX_BATCH_ROWS) {
          await send(batch);
          batch = [];
        }
      }
      if (batch.length > 0) await send(batch);
      post({ type: 'sheetEnd', name: (worksheet as unknown as { name?: string }).name ?? null });
    }
    post({ type: 'done' });
  };
  parse().catch((err: unknown) =>
    post({ type: 'error', message: err instanceof Error ? err.message : String(err) }),
  );
}

if (parentPort) run(parentPort);
