/** Runs the report pass (real DuckDB engine) over a small hand-made CSV, with the given steps. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  fileSource,
  openEngine,
  runAnalysis,
  type AnalysisResult,
  type AnalysisStep,
} from '../../domain/reports/engine';

export async function analyseCsv(csv: string, steps: AnalysisStep[]): Promise<AnalysisResult> {
  const dir = await mkdtemp(join(tmpdir(), 'rules-test-'));
  const engine = await openEngine({ threads: 1, memoryLimitMb: 256, tempDirectory: join(dir, 'spill') });
  try {
    const path = join(dir, 'data.csv');
    await writeFile(path, csv);
    return await runAnalysis(
      engine.conn,
      fileSource(path, { format: 'csv', delimiter: ',', sizeBytes: Buffer.byteLength(csv) }),
      steps,
      { companyId: 'c', fileId: 'f', fileVersionId: 'v', version: 1, extra: {} },
      { maxColumns: 1000, maxRows: 1_000_000, workDir: dir },
    );
  } finally {
    engine.close();
    await rm(dir, { recursive: true, force: true });
  }
}
