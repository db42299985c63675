import type * as Minio from 'minio';

export interface StreamUploadOptions {
  partBytes: number;
  /** asked when the first bytes have been read (the content type may depend on them) */
  contentType: () => string;
  /** parts uploading at the same time (each is held in memory until MinIO has it) */
  maxInFlight?: number;
}

/**
 * Streams `source` into one object without holding it whole: parts of `partBytes` go to MinIO as a
 * multipart upload while the next part is read; a source shorter than one part is sent as one PUT.
 * Reading pauses while `maxInFlight` parts are in flight, so the request's backpressure reaches the
 * client. Any failure (the source's, e.g. 413, or MinIO's) aborts the multipart upload, so no object
 * and no parts remain, and is rethrown.
 */
export async function streamToObject(
  client: Minio.Client,
  bucket: string,
  key: string,
  source: AsyncIterable<Buffer>,
  options: StreamUploadOptions,
): Promise<{ size: number }> {
  const maxInFlight = options.maxInFlight ?? 2;
  const headers = () => ({ 'Content-Type': options.contentType() });
  let held: Buffer[] = [];
  let heldBytes = 0;
  let size = 0;
  let uploadId: string | undefined;
  let partNumber = 0;
  let failure: Error | undefined;
  const etags: Array<{ part: number; etag: string }> = [];
  const inFlight = new Set<Promise<void>>();
  // read through a function: the part callbacks set it, which control-flow narrowing cannot see
  const failed = (): Error | undefined => failure;

  const take = (bytes: number): Buffer => {
    const all = held.length === 1 ? held[0] : Buffer.concat(held, heldBytes);
    const part = all.subarray(0, bytes);
    const rest = all.subarray(bytes);
    held = rest.length > 0 ? [rest] : [];
    heldBytes = rest.length;
    // copy, so the part does not keep the (larger) concatenated buffer alive after it is sent
    return bytes === all.length ? part : Buffer.from(part);
  };

  const sendPart = (payload: Buffer): void => {
    const part = ++partNumber;
    const sending: Promise<void> = client
      .uploadPart(
        { bucketName: bucket, objectName: key, uploadID: uploadId!, partNumber: part, headers: {} },
        payload,
      )
      .then((res) => {
        etags.push({ part, etag: res.etag });
      })
      .catch((err: unknown) => {
        failure ??= err instanceof Error ? err : new Error(String(err));
      })
      .finally(() => {
        inFlight.delete(sending);
      });
    inFlight.add(sending);
  };

  try {
    for await (const chunk of source) {
      const early = failed();
      if (early) throw early;
      held.push(chunk);
      heldBytes += chunk.length;
      size += chunk.length;
      while (heldBytes >= options.partBytes) {
        uploadId ??= await client.initiateNewMultipartUpload(bucket, key, headers());
        sendPart(take(options.partBytes));
        while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
        const partFailure = failed();
        if (partFailure) throw partFailure;
      }
    }
    if (uploadId === undefined) {
      const body = take(heldBytes);
      await client.putObject(bucket, key, body, body.length, headers());
      return { size };
    }
    if (heldBytes > 0) sendPart(take(heldBytes));
    await Promise.all([...inFlight]);
    const lastFailure = failed();
    if (lastFailure) throw lastFailure;
    etags.sort((a, b) => a.part - b.part);
    await client.completeMultipartUpload(bucket, key, uploadId, etags);
    return { size };
  } catch (err) {
    await Promise.allSettled([...inFlight]);
    if (uploadId !== undefined) {
      await client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
    }
    throw err;
  }
}
