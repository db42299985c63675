import { expect } from 'chai';
import { Readable } from 'node:stream';
import { streamToObject } from '../../common/objectUpload';
import { testEnv } from '../helpers/env';

async function readObject(key: string): Promise<Buffer> {
  const { storage } = testEnv();
  const chunks: Buffer[] = [];
  for await (const c of await storage.client.getObject(storage.bucket, key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function chunked(data: Buffer, size: number): Readable {
  const parts: Buffer[] = [];
  for (let o = 0; o < data.length; o += size) parts.push(data.subarray(o, o + size));
  return Readable.from(parts);
}

describe('streamToObject (real MinIO)', function () {
  this.timeout(30_000);
  const partBytes = 5 * 1024 * 1024;

  it('stores a small source with one PUT and a large one as a multipart upload, byte for byte', async () => {
    const { storage } = testEnv();
    const small = Buffer.from('a,b\n1,2\n');
    const key1 = storage.key('unit', 'small.csv');
    expect(
      await streamToObject(storage.client, storage.bucket, key1, chunked(small, 3), {
        partBytes,
        contentType: () => 'text/csv',
      }),
    ).to.deep.equal({ size: small.length });
    expect((await readObject(key1)).equals(small)).to.equal(true);

    const large = Buffer.alloc(partBytes * 2 + 12345);
    for (let i = 0; i + 4 <= large.length; i += 4) large.writeUInt32LE(i, i);
    const key2 = storage.key('unit', 'large.bin');
    const result = await streamToObject(storage.client, storage.bucket, key2, chunked(large, 65536), {
      partBytes,
      maxInFlight: 2,
      contentType: () => 'application/octet-stream',
    });
    expect(result.size).to.equal(large.length);
    expect((await readObject(key2)).equals(large)).to.equal(true);
    const stat = await storage.client.statObject(storage.bucket, key2);
    expect(stat.etag).to.match(/-3$/); // three parts
  });

  it('a source that fails midway aborts the multipart upload: no object, no parts', async () => {
    const { storage } = testEnv();
    const key = storage.key('unit', 'aborted.bin');
    async function* failing() {
      yield Buffer.alloc(partBytes + 10);
      yield Buffer.alloc(partBytes);
      throw new Error('client went away');
    }
    try {
      await streamToObject(storage.client, storage.bucket, key, failing(), {
        partBytes,
        contentType: () => 'application/octet-stream',
      });
      expect.fail('no error');
    } catch (err) {
      expect((err as Error).message).to.equal('client went away');
    }
    const incomplete: unknown[] = [];
    for await (const u of storage.client.listIncompleteUploads(storage.bucket, key, true)) incomplete.push(u);
    expect(incomplete).to.deep.equal([]);
    try {
      await storage.client.statObject(storage.bucket, key);
      expect.fail('object exists');
    } catch (err) {
      expect((err as { code?: string }).code).to.equal('NotFound');
    }
  });
});
