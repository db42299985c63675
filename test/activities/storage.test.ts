import { expect } from 'chai';
import { testEnv } from '../helpers/env';

describe('MinIO', () => {
  it('stores and reads back an object under the run prefix', async () => {
    const { storage } = testEnv();
    const key = storage.key('roundtrip', 'hello.csv');
    const bytes = Buffer.from('a,b\n1,2\n');
    await storage.client.putObject(storage.bucket, key, bytes, bytes.length, { 'Content-Type': 'text/csv' });
    const stat = await storage.client.statObject(storage.bucket, key);
    expect(stat.size).to.equal(bytes.length);
    const stream = await storage.client.getObject(storage.bucket, key);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).to.equal('a,b\n1,2\n');
    await storage.client.removeObject(storage.bucket, key);
    let missing: unknown;
    try {
      await storage.client.statObject(storage.bucket, key);
    } catch (e) {
      missing = e;
    }
    expect((missing as { code?: string }).code).to.equal('NotFound');
  });
});
