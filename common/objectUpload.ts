import type * as Minio from 'minio';

export interface StreamUploadOptions {
  partBytes: number;
  /** asked when the first bytes have been read (the content type may depend on them) */
  contentType: () => string;
  /** parts uploading at the same time (each is held in memory until MinIO has it) */
  maxInFlight?: number;
}

/**
 * Part buffers shared by all uploads of the process and reused, so streaming 25 MB does not leave 25 MB
 * of part-sized garbage behind each time. At most POOL_IDLE_MAX buffers per part size are kept idle.
 */
const POOL_IDLE_MAX = 6;
const partPools = new Map<number, Buffer[]>();

function takePartBuffer(size: number): Buffer {
  return partPools.get(size)?.pop() ?? Buffer.allocUnsafe(size);
}

function returnPartBuffer(buffer: Buffer): void {
  let pool = partPools.get(buffer.length);
  if (!pool) partPools.set(buffer.length, (pool = []));
  if (pool.length < POOL_IDLE_MAX) pool.push(buffer);
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
  const { partBytes } = options;
  const maxInFlight = options.maxInFlight ?? 2;
  const headers = () => ({ 'Content-Type': options.contentType() });
  // Chunks are kept as they come until a part is full, then copied once into a part buffer; part
  // buffers come from the shared pool and go back once MinIO has the part, so an upload holds at most
  // maxInFlight parts plus one part of chunks, and a small file needs no part-sized buffer at all.
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  let size = 0;
  let uploadId: string | undefined;
  let partNumber = 0;
  let failure: Error | undefined;
  const etags: Array<{ part: number; etag: string }> = [];
  const inFlight = new Set<Promise<void>>();
  // read through a function: the part callbacks set it, which control-flow narrowing cannot see
  const failed = (): Error | undefined => failure;

  /** Moves up to one part's bytes from the pending chunks into a (reused) part buffer. */
  const fillPart = (): Buffer => {
    const part = takePartBuffer(partBytes);
    let filled = 0;
    while (filled < partBytes && pending.length > 0) {
      const chunk = pending[0];
      const n = Math.min(chunk.length, partBytes - filled);
      chunk.copy(part, filled, 0, n);
      filled += n;
      if (n === chunk.length) pending.shift();
      else pending[0] = chunk.subarray(n);
    }
    pendingBytes -= filled;
    return part;
  };

  const sendPart = (buffer: Buffer, length: number): void => {
    const part = ++partNumber;
    const sending: Promise<void> = client
      .uploadPart(
        { bucketName: bucket, objectName: key, uploadID: uploadId!, partNumber: part, headers: {} },
        length === buffer.length ? buffer : buffer.subarray(0, length),
      )
      .then((res) => {
        etags.push({ part, etag: res.etag });
        // only after MinIO answered: nothing refers to the buffer any more (a failed part's is dropped)
        returnPartBuffer(buffer);
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
      pending.push(chunk);
      pendingBytes += chunk.length;
      size += chunk.length;
      while (pendingBytes >= partBytes) {
        uploadId ??= await client.initiateNewMultipartUpload(bucket, key, headers());
        sendPart(fillPart(), partBytes);
        while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
        const partFailure = failed();
        if (partFailure) throw partFailure;
      }
    }
    if (uploadId === undefined) {
      const body = Buffer.concat(pending, pendingBytes);
      await client.putObject(bucket, key, body, body.length, headers());
      return { size };
    }
    if (pendingBytes > 0) {
      const rest = pendingBytes;
      sendPart(fillPart(), rest);
    }
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
