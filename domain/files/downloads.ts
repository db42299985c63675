import * as Minio from 'minio';
import type { Config } from '../../common/config';
import { s3Client } from '../../common/storage';

const presigners = new WeakMap<Config, Minio.Client>();

/**
 * A client used only to sign download links, for the address clients reach (S3_PUBLIC_ENDPOINT).
 * Signing is local: the region is configured, so no request is made.
 */
function presigner(config: Config): Minio.Client {
  let client = presigners.get(config);
  if (!client) {
    client = s3Client(config, config.s3.publicEndpoint);
    presigners.set(config, client);
  }
  return client;
}

/** RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 name. */
export function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * A presigned GET for exactly one object (one version), valid for `expiresIn` seconds; served as `contentType`
 * when given (a version's: the charset its text is in, decided once the whole upload was read), else with the
 * object's own.
 */
export async function downloadLink(
  config: Config,
  objectKey: string,
  originalName: string,
  expiresIn: number,
  now: Date = new Date(),
  contentType?: string,
): Promise<{ url: string; expiresAt: string }> {
  const url = await presigner(config).presignedGetObject(
    config.s3.bucket,
    objectKey,
    expiresIn,
    {
      'response-content-disposition': attachmentDisposition(originalName),
      ...(contentType ? { 'response-content-type': contentType } : {}),
    },
    now,
  );
  return { url, expiresAt: new Date(now.getTime() + expiresIn * 1000).toISOString() };
}
