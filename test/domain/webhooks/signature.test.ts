import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { signWebhook, verifyWebhook, SIGNATURE_TOLERANCE_SECONDS } from '../../../domain/webhooks/signature';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = '{"id":"4f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f","type":"ping","schemaVersion":1,"data":{}}';
const now = 1_790_000_000;

function headers(signature: string, timestamp: number | string = now) {
  return {
    'webhook-id': '4f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f',
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
  };
}

describe('webhook signature (v1)', () => {
  it('is v1= + hex HMAC-SHA256 over "timestamp.rawBody" keyed with the whole whsec_ string as UTF-8', () => {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${now}.${body}`).digest('hex');
    expect(signWebhook(secret, now, body)).to.equal(`v1=${expected}`);
    expect(signWebhook(secret, String(now), Buffer.from(body))).to.equal(`v1=${expected}`);
    expect(expected).to.match(/^[0-9a-f]{64}$/);
  });

  it('verifies a genuine delivery and returns its id and timestamp', () => {
    const result = verifyWebhook(secret, headers(signWebhook(secret, now, body)), body, { nowSeconds: now });
    expect(result).to.deep.equal({ ok: true, id: '4f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f', timestamp: now });
  });

  it('accepts fetch Headers and header names in any case', () => {
    const sig = signWebhook(secret, now, body);
    const h = new Headers(headers(sig));
    expect(verifyWebhook(secret, h, body, { nowSeconds: now }).ok).to.equal(true);
    const upper = { 'Webhook-Id': 'x', 'Webhook-Timestamp': String(now), 'Webhook-Signature': sig };
    expect(verifyWebhook(secret, upper, body, { nowSeconds: now }).ok).to.equal(true);
  });

  it('refuses a changed body, a re-serialised body, another secret and a changed timestamp', () => {
    const sig = signWebhook(secret, now, body);
    const tampered = body.replace('ping', 'pong');
    expect(verifyWebhook(secret, headers(sig), tampered, { nowSeconds: now })).to.deep.equal({
      ok: false,
      reason: 'bad_signature',
    });
    const reserialised = JSON.stringify(JSON.parse(body), null, 1);
    expect(verifyWebhook(secret, headers(sig), reserialised, { nowSeconds: now }).ok).to.equal(false);
    expect(verifyWebhook(`${secret}x`, headers(sig), body, { nowSeconds: now }).ok).to.equal(false);
    expect(verifyWebhook(secret, headers(sig, now + 1), body, { nowSeconds: now }).ok).to.equal(false);
  });

  it('does not verify with the key a base64-decoding library would derive from the secret', () => {
    const decodedKey = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const other = createHmac('sha256', decodedKey).update(`${now}.${body}`).digest('hex');
    expect(verifyWebhook(secret, headers(`v1=${other}`), body, { nowSeconds: now }).ok).to.equal(false);
  });

  it('refuses timestamps 300 s or more away from now, either way, and accepts 299 s', () => {
    const at = (ts: number) =>
      verifyWebhook(secret, headers(signWebhook(secret, ts, body), ts), body, { nowSeconds: now });
    expect(SIGNATURE_TOLERANCE_SECONDS).to.equal(300);
    expect(at(now - 299).ok).to.equal(true);
    expect(at(now + 299).ok).to.equal(true);
    expect(at(now - 300)).to.deep.equal({ ok: false, reason: 'timestamp_out_of_range' });
    expect(at(now + 300)).to.deep.equal({ ok: false, reason: 'timestamp_out_of_range' });
    expect(at(now - 86_400).ok).to.equal(false);
  });

  it('uses the clock when no time is given', () => {
    const ts = Math.floor(Date.now() / 1000);
    expect(verifyWebhook(secret, headers(signWebhook(secret, ts, body), ts), body).ok).to.equal(true);
    const old = ts - 600;
    expect(verifyWebhook(secret, headers(signWebhook(secret, old, body), old), body).ok).to.equal(false);
  });

  it('refuses missing headers, malformed timestamps and malformed signatures', () => {
    const sig = signWebhook(secret, now, body);
    expect(verifyWebhook(secret, {}, body, { nowSeconds: now })).to.deep.equal({
      ok: false,
      reason: 'missing_headers',
    });
    expect(verifyWebhook(secret, headers(sig, '17e8'), body, { nowSeconds: now }).ok).to.equal(false);
    expect(verifyWebhook(secret, headers(sig, '-1'), body, { nowSeconds: now }).ok).to.equal(false);
    expect(verifyWebhook(secret, headers(sig.slice(3)), body, { nowSeconds: now }).ok).to.equal(false);
    expect(verifyWebhook(secret, headers(`v2=${sig.slice(3)}`), body, { nowSeconds: now }).ok).to.equal(
      false,
    );
    expect(verifyWebhook(secret, headers(sig.slice(0, -2)), body, { nowSeconds: now }).ok).to.equal(false);
  });

  it('accepts several space-separated signatures when one matches', () => {
    const sig = signWebhook(secret, now, body);
    const other = signWebhook('whsec_other', now, body);
    expect(verifyWebhook(secret, headers(`${other} ${sig}`), body, { nowSeconds: now }).ok).to.equal(true);
    expect(verifyWebhook(secret, headers(`${other} ${other}`), body, { nowSeconds: now }).ok).to.equal(false);
  });
});
