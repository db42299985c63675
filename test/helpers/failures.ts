/** A real DuckDB error that quotes a file's cell, for the tests of what failed analysis attempts let out. */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openEngine } from '../../domain/reports/engine';

export const SECRET = 'secret-cell-7f3a';

/** DuckDB's strict reader on a row wider than its header: the error quotes the row (with SECRET) */
export async function duckdbCsvError(): Promise<Error> {
  const dir = path.join(os.tmpdir(), `failures-${process.pid}-${Date.now()}`);
  await mkdir(dir, { recursive: true });
  const engine = await openEngine({
    threads: 1,
    memoryLimitMb: 128,
    tempDirectory: path.join(dir, 'duckdb'),
  });
  try {
    const file = path.join(dir, 'wide.csv');
    await writeFile(file, `id,name\n1,ann\n2,${SECRET},extra\n`);
    await engine.conn.run(
      `SELECT * FROM read_csv('${file}', header=true, auto_detect=false, strict_mode=true,
         columns={'id': 'VARCHAR', 'name': 'VARCHAR'})`,
    );
  } catch (err) {
    return err as Error;
  } finally {
    engine.close();
    await rm(dir, { recursive: true, force: true });
  }
  throw new Error('DuckDB read the wide row');
}

/** The last failure of an activity that was retried, as the workflow's history keeps it (its started event). */
export function retriedFailure(
  events: Array<{ activityTaskStartedEventAttributes?: unknown }>,
): string | undefined {
  const retried = events
    .map(
      (e) => e.activityTaskStartedEventAttributes as { attempt?: number; lastFailure?: unknown } | undefined,
    )
    .find((a) => a && (a.attempt ?? 1) > 1 && a.lastFailure);
  return retried ? JSON.stringify(retried.lastFailure) : undefined;
}
