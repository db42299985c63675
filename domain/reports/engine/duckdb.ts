import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { installMacros } from './sql';

export interface EngineSettings {
  /** DuckDB worker threads */
  threads: number;
  /** DuckDB memory_limit in MB: hash aggregates and sorts above it spill to `tempDirectory` */
  memoryLimitMb: number;
  /** where DuckDB spills; created when missing */
  tempDirectory: string;
}

export interface Engine {
  conn: DuckDBConnection;
  /**
   * another connection to the same database (same settings and macros), to run work concurrently with
   * `conn`; closed by `close`
   */
  connect(): Promise<DuckDBConnection>;
  /** interrupts the query running on `conn` and on every connection opened by `connect` (a cancelled run) */
  interrupt(): void;
  /** closes the connection and the in-memory database (every table goes with it) */
  close(): void;
}

/**
 * A private in-memory DuckDB database for one build (nothing is shared between builds, nothing stays on
 * disk but spill files DuckDB removes itself), with the configured threads, memory limit and temp folder.
 */
export async function openEngine(settings: EngineSettings): Promise<Engine> {
  await mkdir(settings.tempDirectory, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(settings.threads),
    memory_limit: `${settings.memoryLimitMb}MB`,
    temp_directory: settings.tempDirectory,
    // no network, no extension downloads, no reading of other files than those named by the engine
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  const others: DuckDBConnection[] = [];
  const connect = async () => {
    const c = await instance.connect();
    await c.run("SET TimeZone = 'UTC'");
    await installMacros(c);
    return c;
  };
  const conn = await connect();
  let closed = false;
  return {
    conn,
    async connect() {
      const c = await connect();
      others.push(c);
      return c;
    },
    interrupt() {
      if (closed) return;
      conn.interrupt();
      for (const c of others) c.interrupt();
    },
    close() {
      if (closed) return;
      closed = true;
      for (const c of others) c.closeSync();
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * Opens an engine as a build does (settings, temp folder under `workDir`, macros), classifies one value and
 * closes it: the worker runs it before it polls, so a native binding that cannot load, a work folder that
 * cannot be written or bad engine settings stop the worker at start with the reason, instead of failing every
 * build later (and the library's first load is not paid by the first build). Returns DuckDB's version.
 */
export async function checkEngine(settings: Omit<EngineSettings, 'tempDirectory'> & { workDir: string }) {
  const tempDirectory = path.join(settings.workDir, `engine-check-${process.pid}`);
  try {
    const engine = await openEngine({ ...settings, tempDirectory });
    try {
      const reader = await engine.conn.runAndReadAll(
        "SELECT library_version AS version, ds_class('42') AS k FROM pragma_version()",
      );
      const [row] = reader.getRowObjectsJS() as Array<{ version: string; k: number }>;
      if (row?.k !== 1) throw new Error('the engine classified 42 as something else than an integer');
      return { version: row.version };
    } finally {
      engine.close();
    }
  } catch (err) {
    throw new Error(
      `the analysis engine (DuckDB) cannot start in ${settings.workDir}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  } finally {
    // a folder that could not be made cannot be removed either: the error above says why
    await rm(tempDirectory, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The folders builds, comparisons and engine checks make in the work folder (each removes its own when it ends). */
const WORK_FOLDER = /^(?:build|compare|engine-check)-/;

/**
 * Older than this, a work folder belongs to no run: a build or comparison attempt is cut after 20 minutes
 * (its start-to-close timeout; the run, heartbeating every second, is cancelled at once), an engine check
 * takes seconds.
 */
export const STALE_WORK_FOLDER_MS = 3_600_000;

/**
 * Removes the work folders a process that died left behind (a worker killed mid-build cannot remove its
 * folder: the download, the copy DuckDB reads and its spill files), those not changed for `olderThanMs`.
 * Run by the worker at start and hourly. Returns the names removed.
 */
export async function removeStaleWorkFolders(
  workDir: string,
  { olderThanMs = STALE_WORK_FOLDER_MS, now = Date.now() } = {},
): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(workDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!WORK_FOLDER.test(name)) continue;
    const folder = path.join(workDir, name);
    const info = await stat(folder).catch(() => undefined);
    if (!info?.isDirectory() || now - info.mtimeMs < olderThanMs) continue;
    await rm(folder, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
