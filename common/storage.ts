import * as Minio from 'minio';
import type { Config } from './config';

export interface Storage {
  client: Minio.Client;
  bucket: string;
  /** Object key under this process's prefix (empty in production; one per test run). */
  key(...parts: string[]): string;
}

export function createStorage(config: Config): Storage {
  const url = new URL(config.s3.endpoint);
  const useSSL = url.protocol === 'https:';
  const client = new Minio.Client({
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : useSSL ? 443 : 80,
    useSSL,
    accessKey: config.s3.accessKey,
    secretKey: config.s3.secretKey,
    region: config.s3.region,
    pathStyle: true,
  });
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
