import { mkdir } from 'node:fs/promises';
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
    close() {
      if (closed) return;
      closed = true;
      for (const c of others) c.closeSync();
      conn.closeSync();
      instance.closeSync();
    },
  };
}
