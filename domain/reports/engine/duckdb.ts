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
  const conn = await instance.connect();
  await conn.run("SET TimeZone = 'UTC'");
  await installMacros(conn);
  let closed = false;
  return {
    conn,
    close() {
      if (closed) return;
      closed = true;
      conn.closeSync();
      instance.closeSync();
    },
  };
}
