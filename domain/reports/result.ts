import type { Storage } from '../../common/storage';
import type { Report } from '../../db/models';
import type { ReportResult } from './present';

/**
 * A ready report's result: inline (JSONB) or, when large, the object in MinIO (README "Reports"); null when
 * the report is not ready.
 */
export async function readResult(storage: Storage, report: Report): Promise<ReportResult | null> {
  if (report.status !== 'ready') return null;
  if (report.result) return report.result as ReportResult;
  if (!report.resultObjectKey) return null;
  const stream = await storage.client.getObject(storage.bucket, report.resultObjectKey);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReportResult;
}
