import * as Minio from 'minio';
import type { Config } from './config';

export interface Storage {
  client: Minio.Client;
  bucket: string;
  /** Object key under this process's prefix (empty in production; one per test run). */
  key(...parts: string[]): string;
}

/** An S3 client for `endpoint` with the configured credentials and region. */
export function s3Client(config: Config, endpoint: string = config.s3.endpoint): Minio.Client {
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
