import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { generateWebhookSecret, webhookSecretBox } from '../../../domain/webhooks/secret';
import { deliveryPolicy, retryDelaysMs, WEBHOOK_MAX_ATTEMPTS } from '../../../domain/webhooks/policy';
import { loadConfig } from '../../../common/config';

describe('webhook signing secrets', () => {
  const box = webhookSecretBox('a-test-master-secret-of-at-least-32-characters');

  it('start with whsec_ and are random', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(a).to.not.equal(b);
  });

  it('are stored encrypted and open again only for the endpoint they were sealed for', () => {
    const id = randomUUID();
    const secret = generateWebhookSecret();
    const sealed = box.seal(id, secret);
    expect(sealed).to.match(/^v1:/);
    expect(sealed).to.not.include(secret);
    expect(sealed).to.not.include(secret.slice(6));
    expect(box.open(id, sealed)).to.equal(secret);
    expect(box.seal(id, secret)).to.not.equal(sealed); // a fresh IV every time
    expect(() => box.open(randomUUID(), sealed)).to.throw();
    expect(() => webhookSecretBox('another-master-secret-of-32-characters!!').open(id, sealed)).to.throw();
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => box.open(id, `v1:${raw.toString('base64')}`)).to.throw();
  });
});

describe('webhook retry policy', () => {
  it('defaults to 5 attempts in all with growing delays of 5 s, 15 s, 45 s and 135 s', () => {
    const config = loadConfig({ NODE_ENV: 'test' });
    const policy = deliveryPolicy(config.webhooks);
    expect(WEBHOOK_MAX_ATTEMPTS).to.equal(5);
    expect(retryDelaysMs(policy)).to.deep.equal([5_000, 15_000, 45_000, 135_000]);
    expect(policy.attemptTimeoutMs).to.equal(10_000);
  });

  it('is configurable and capped by the maximum interval', () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      WEBHOOK_RETRY_INITIAL_MS: '1000',
      WEBHOOK_RETRY_BACKOFF_COEFFICIENT: '4',
      WEBHOOK_RETRY_MAX_INTERVAL_MS: '20000',
      WEBHOOK_ATTEMPT_TIMEOUT_MS: '2500',
    });
    const policy = deliveryPolicy(config.webhooks);
    expect(retryDelaysMs(policy)).to.deep.equal([1_000, 4_000, 16_000, 20_000]);
    expect(policy.attemptTimeoutMs).to.equal(2_500);
    expect(() => loadConfig({ WEBHOOK_RETRY_INITIAL_MS: 'soon' })).to.throw(/WEBHOOK_RETRY_INITIAL_MS/);
    expect(() => loadConfig({ WEBHOOK_ATTEMPT_TIMEOUT_MS: '5' })).to.throw(/WEBHOOK_ATTEMPT_TIMEOUT_MS/);
  });
});
