import http from 'node:http';
import https from 'node:https';
import * as Minio from 'minio';
import type { Config } from './config';

/**
 * How long an S3 call waits for its answer to begin: the connection, the request (its body being sent counts
 * as activity) and the wait for the status line. A MinIO that accepts connections and never answers (hung,
 * or a network path that drops packets) otherwise holds an upload, a preview or a comparison request — and
 * its database transaction when it has one — for ever. An answer being read is not timed here.
 */
export const S3_ANSWER_TIMEOUT_MS = 30_000;

/** `http`'s or `https`'s request, failing with ETIMEDOUT when no answer begins within `timeoutMs` idle. */
function answerTimed(
  base: typeof http | typeof https,
  timeoutMs: number,
): NonNullable<Minio.ClientOptions['transport']> {
  return {
    request: ((options: http.RequestOptions, callback?: (res: http.IncomingMessage) => void) => {
      const req = base.request(options, callback);
      req.setTimeout(timeoutMs, () => {
        const err = new Error(
          `the object store did not answer within ${timeoutMs} ms`,
        ) as NodeJS.ErrnoException;
        err.code = 'ETIMEDOUT';
        req.destroy(err);
      });
      req.once('response', () => req.setTimeout(0));
      return req;
    }) as typeof http.request,
  };
}

export interface Storage {
  client: Minio.Client;
  bucket: string;
  /** Object key under this process's prefix (empty in production; one per test run). */
  key(...parts: string[]): string;
}

/** An S3 client for `endpoint` with the configured credentials and region (answers timed: S3_ANSWER_TIMEOUT_MS). */
export function s3Client(
  config: Config,
  endpoint: string = config.s3.endpoint,
  answerTimeoutMs = S3_ANSWER_TIMEOUT_MS,
): Minio.Client {
  const url = new URL(endpoint);
  const useSSL = url.protocol === 'https:';
  return new Minio.Client({
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
    accessKey: config.s3.accessKey,
    secretKey: config.s3.secretKey,
    region: config.s3.region,
    pathStyle: true,
    transport: answerTimed(useSSL ? https : http, answerTimeoutMs),
  });
}

/** Whether an S3 call failed because the object is not there (GET: NoSuchKey; HEAD: NotFound). */
export function isMissingObject(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'NoSuchKey' || code === 'NotFound';
}

export function createStorage(config: Config): Storage {
  const client = s3Client(config);
  return {
    client,
    bucket: config.s3.bucket,
    key: (...parts) => config.s3.prefix + parts.join('/'),
  };
}

export async function checkStorage(storage: Storage): Promise<void> {
  const exists = await storage.client.bucketExists(storage.bucket);
  if (!exists) throw new Error(`bucket ${storage.bucket} does not exist`);
}
