/**
 * The XLSX parse of a report build, in a worker thread (./load.ts starts it): ExcelJS's streaming
 * `WorkbookReader` runs here and turns the cells into text while the build's thread appends them to
 * DuckDB, so the two cores both work (the parse is the floor of an XLSX build).
 *
 * Messages in: `{type: 'chunk', data}` (the file's bytes, in order), `{type: 'end'}`, `{type: 'ack'}` (a
 * batch was appended). Out: `{type: 'rows', rows, unreadable, bytes}` (a batch: for each row its number, its
 * cell count and its cells as text — null for an empty or unreadable cell, trailing empty cells left out —;
 * the unreadable cells of the batch; `bytes` of the file consumed so far), `{type: 'sheetEnd', name}`, `{type: 'done'}`,
 * `{type: 'error', message}`. At most MAX_IN_FLIGHT batches wait for their ack, so memory stays bounded when
 * the appends fall behind.
 */
import { Readable } from 'node:stream';
import { parentPort } from 'node:worker_threads';
import ExcelJS from 'exceljs';
import { fastCellText, UNREADABLE } from './xlsxCells';

/** rows per batch */
export const XLSX_BATCH_ROWS = 2000;
const MAX_IN_FLIGHT = 8;

export type ToXlsxWorker = { type: 'chunk'; data: Uint8Array } | { type: 'end' } | { type: 'ack' };
export type FromXlsxWorker =
  | { type: 'rows'; rows: Array<number | string | null>; unreadable: number; bytes: number }
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
  const send = async (rows: Array<number | string | null>, unreadable: number) => {
    inFlight++;
    post({ type: 'rows', rows, unreadable, bytes });
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
      let batch: Array<number | string | null> = [];
      let rowsInBatch = 0;
      let unreadable = 0;
      for await (const row of worksheet) {
        // the row's cells as text (null: empty or unreadable, counted), trailing empty cells left out
        const values = row.values as unknown[];
        let count = 0;
        const at = batch.length + 1;
        batch.push(row.number, 0);
        for (let c = 1; c < values.length; c++) {
          let text = fastCellText(values[c]);
          if (text === UNREADABLE) {
            unreadable++;
            text = null;
          }
          batch.push(text);
          if (text !== null) count = c;
        }
        batch.length = at + 1 + count;
        batch[at] = count;
        if (++rowsInBatch >= XLSX_BATCH_ROWS) {
          await send(batch, unreadable);
          batch = [];
          rowsInBatch = 0;
          unreadable = 0;
        }
      }
      if (rowsInBatch > 0) await send(batch, unreadable);
      post({ type: 'sheetEnd', name: (worksheet as unknown as { name?: string }).name ?? null });
    }
    post({ type: 'done' });
  };
  parse().catch((err: unknown) =>
    post({ type: 'error', message: err instanceof Error ? err.message : String(err) }),
  );
}

if (parentPort) run(parentPort);
