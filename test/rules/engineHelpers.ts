/** Runs the report pass (real DuckDB engine) over a small hand-made CSV, with the given steps. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import {
  fileSource,
  openEngine,
  runAnalysis,
  type AnalysisResult,
  type AnalysisStep,
} from '../../domain/reports/engine';

/** Runs the report pass over a workbook built by `fill` (one worksheet per sheet). */
export async function analyseXlsx(
  fill: (workbook: ExcelJS.Workbook) => void,
  steps: AnalysisStep[],
): Promise<AnalysisResult> {
  const workbook = new ExcelJS.Workbook();
  fill(workbook);
  const bytes = Buffer.from(await workbook.xlsx.writeBuffer());
  return analyse(bytes, 'xlsx', steps);
}

export async function analyseCsv(csv: string, steps: AnalysisStep[]): Promise<AnalysisResult> {
  return analyse(Buffer.from(csv), 'csv', steps);
}

async function analyse(
  bytes: Buffer,
  format: 'csv' | 'xlsx',
  steps: AnalysisStep[],
): Promise<AnalysisResult> {
  const dir = await mkdtemp(join(tmpdir(), 'rules-test-'));
  const engine = await openEngine({ threads: 1, memoryLimitMb: 256, tempDirectory: join(dir, 'spill') });
  try {
    const path = join(dir, `data.${format}`);
    await writeFile(path, bytes);
    return await runAnalysis(
      engine.conn,
      fileSource(path, { format, delimiter: format === 'csv' ? ',' : null, sizeBytes: bytes.length }),
      steps,
      { companyId: 'c', fileId: 'f', fileVersionId: 'v', version: 1, extra: {} },
      { maxColumns: 1000, xlsxLimits: null, maxRows: 1_000_000, workDir: dir },
    );
  } finally {
    engine.close();
    await rm(dir, { recursive: true, force: true });
  }
}
