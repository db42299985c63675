import type { Knex } from 'knex';
import type { Storage } from '../../common/storage';

export interface SweepResult {
  objectsRemoved: number;
  uploadsAborted: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/**
 * A large report result's object name: `<reportId>-b<build>-<attempt>.json` (domain/reports/build.ts), or
 * `<reportId>-b<build>.json` as builds named it before attempts were
 */
const RESULT = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-b\d+(?:-[0-9a-f]{8})?\.json$/;

/**
 * Removes what an upload that never committed left in the object store: objects under `files/` whose key
 * (`files/<companyId>/<fileId>/<versionId>`) names a version id without a `file_versions` row, older than
 * `olderThanMs` (so uploads in progress are left alone), and multipart uploads never completed where the
 * store lists them by prefix (S3 does; MinIO lists them only per exact key and expires stale ones itself,
 * MINIO_API_STALE_UPLOADS_EXPIRY, 24 h by default; on S3 a lifecycle rule AbortIncompleteMultipartUpload
 * does the same). Also catches objects of deleted files whose removal failed after commit, and large report
 * results (`reports/…/<reportId>-b<build>-<attempt>.json`) no report row names any more: a deleted file's, or one
 * replaced by a rebuild, whose removal failed (MinIO unavailable at that moment), or one written by a build
 * that then failed. Idempotent.
 */
export async function sweepOrphanObjects(
  knex: Knex,
  storage: Storage,
  { olderThanMs = 3600_000, now = Date.now() }: { olderThanMs?: number; now?: number } = {},
): Promise<SweepResult> {
  const prefix = storage.key('files') + '/';
  const before = now - olderThanMs;
  const candidates = new Map<string, string>(); // version id → object key
  let objectsRemoved = 0;

  const flush = async () => {
    if (candidates.size === 0) return;
    const ids = [...candidates.keys()];
    const known = new Set(
      ((await knex('fileVersions').whereIn('id', ids).select('id')) as Array<{ id: string }>).map(
        (r) => r.id,
      ),
    );
    const orphans = ids.filter((id) => !known.has(id)).map((id) => candidates.get(id)!);
    if (orphans.length > 0) await storage.client.removeObjects(storage.bucket, orphans);
    objectsRemoved += orphans.length;
    candidates.clear();
  };

  const listing = storage.client.listObjectsV2(storage.bucket, prefix, true) as AsyncIterable<{
    name?: string;
    lastModified?: Date;
  }>;
  for await (const item of listing) {
    if (!item.name || !item.lastModified || item.lastModified.getTime() > before) continue;
    const versionId = item.name.slice(item.name.lastIndexOf('/') + 1);
    if (!UUID.test(versionId)) continue;
    candidates.set(versionId, item.name);
    if (candidates.size >= 500) await flush();
  }
  await flush();

  // large report results: an object is kept while its report row names it
  const results = new Map<string, string>(); // object key → report id
  const flushResults = async () => {
    if (results.size === 0) return;
    const named = new Set(
      (
        (await knex('reports')
          .whereIn('id', [...new Set(results.values())])
          .select('resultObjectKey')) as Array<{ resultObjectKey: string | null }>
      ).map((r) => r.resultObjectKey),
    );
    const orphans = [...results.keys()].filter((key) => !named.has(key));
    if (orphans.length > 0) await storage.client.removeObjects(storage.bucket, orphans);
    objectsRemoved += orphans.length;
    results.clear();
  };
  const resultListing = storage.client.listObjectsV2(
    storage.bucket,
    storage.key('reports') + '/',
    true,
  ) as AsyncIterable<{ name?: string; lastModified?: Date }>;
  for await (const item of resultListing) {
    if (!item.name || !item.lastModified || item.lastModified.getTime() > before) continue;
    const reportId = RESULT.exec(item.name.slice(item.name.lastIndexOf('/') + 1))?.[1];
    if (!reportId) continue;
    results.set(item.name, reportId);
    if (results.size >= 500) await flushResults();
  }
  await flushResults();

  let uploadsAborted = 0;
  const incomplete = storage.client.listIncompleteUploads(storage.bucket, prefix, true) as AsyncIterable<{
    key?: string;
    uploadId?: string;
    initiated?: Date;
  }>;
  for await (const upload of incomplete) {
    if (!upload.key || !upload.uploadId || !upload.initiated || upload.initiated.getTime() > before) continue;
    await storage.client.abortMultipartUpload(storage.bucket, upload.key, upload.uploadId);
    uploadsAborted++;
  }
  return { objectsRemoved, uploadsAborted };
}
