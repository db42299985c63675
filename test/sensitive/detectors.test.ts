import { expect } from 'chai';
import {
  detectValue,
  isAwsAccessKeyId,
  isEmail,
  isGithubToken,
  isHighEntropySecret,
  isIban,
  isIpv4,
  isIpv6,
  isJwt,
  isPaymentCard,
  isPhone,
  isPrivateKey,
  isSlackToken,
  isStripeKey,
  isUrlWithCredentials,
  isUsSsn,
  luhn,
} from '../../domain/sensitive/detectors';
import { decideColumn } from '../../domain/sensitive/decide';

const ctx = { bareSsn: false, secretName: false };

describe('sensitive data: detectors validate, not only match', () => {
  it('email: a valid domain with a top-level domain of letters', () => {
    expect(isEmail('anna.smith+news@mail.example.org')).to.equal(true);
    for (const v of [
      'anna@localhost',
      'a..b@example.com',
      'anna@-example.com',
      'anna@example.c0m',
      '@example.com',
    ]) {
      expect(isEmail(v), v).to.equal(false);
    }
  });

  it('phone: valid for its country (libphonenumber-js); part numbers and short runs are not', () => {
    for (const v of [
      '+1 415-555-2671',
      '(212) 456-7890',
      '+44 7911 123456',
      '+49 151 23456789',
      '0049 30 12345678',
    ]) {
      expect(isPhone(v), v).to.equal(true);
    }
    for (const v of [
      '100-2345-678',
      '12-3456-7890',
      '+1 115-555-2671',
      '1234567',
      '4111111111111111',
      '1-2-3-4-5-6-7-8-9-0',
    ]) {
      expect(isPhone(v), v).to.equal(false);
    }
  });

  it('payment card: Luhn plus a known issuer prefix and length', () => {
    expect(luhn('4111111111111111')).to.equal(true);
    expect(isPaymentCard('4111 1111 1111 1111')).to.equal(true);
    expect(isPaymentCard('5500-0000-0000-0004')).to.equal(true);
    expect(isPaymentCard('378282246310005')).to.equal(true);
    expect(isPaymentCard('4111111111111112'), 'Luhn fails').to.equal(false);
    expect(isPaymentCard('9111111111111115'), 'passes Luhn, no issuer starts with 9').to.equal(false);
    expect(isPaymentCard('41111111111111111'), 'Visa is not 17 digits').to.equal(false);
    expect(isPaymentCard('3782822463100050'), 'Amex is 15 digits').to.equal(false);
  });

  it('IBAN: mod-97 and the country length', () => {
    expect(isIban('DE89 3704 0044 0532 0130 00')).to.equal(true);
    expect(isIban('GB82WEST12345698765432')).to.equal(true);
    expect(isIban('DE89 3704 0044 0532 0130 01'), 'check digits').to.equal(false);
    expect(isIban('DE89370400440532013000123'), 'length').to.equal(false);
  });

  it('US SSN: area, group and serial that were never issued are excluded', () => {
    expect(isUsSsn('123-45-6789')).to.equal(true);
    for (const v of [
      '000-12-3456',
      '666-12-3456',
      '912-12-3456',
      '123-00-4567',
      '123-45-0000',
      '078-05-1120',
    ]) {
      expect(isUsSsn(v), v).to.equal(false);
    }
    expect(isUsSsn('123456789'), 'bare digits without a name hint').to.equal(false);
    expect(isUsSsn('123456789', true)).to.equal(true);
  });

  it('IPv4 and IPv6', () => {
    expect(isIpv4('192.168.1.20')).to.equal(true);
    expect(isIpv4('256.1.1.1')).to.equal(false);
    expect(isIpv4('01.2.3.4')).to.equal(false);
    expect(isIpv6('2001:db8::1')).to.equal(true);
    expect(isIpv6('fe80::1ff:fe23:4567:890a')).to.equal(true);
    expect(isIpv6('12:30:45')).to.equal(false);
    expect(isIpv6('00:1A:2B:3C:4D:5E')).to.equal(false);
  });

  it('secrets: private-key blocks, JWTs, AWS, GitHub, Slack, Stripe keys, URLs with a password', () => {
    const body = Array.from({ length: 4 }, () => 'A'.repeat(30) + 'b'.repeat(34)).join('\n');
    expect(isPrivateKey(`-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`)).to.equal(
      true,
    );
    expect(isPrivateKey(`-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END EC PRIVATE KEY-----`)).to.equal(
      false,
    );
    expect(isPrivateKey(`-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY-----`)).to.equal(false);
    const header = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');
    const payload = Buffer.from('{"sub":"1"}').toString('base64url');
    expect(isJwt(`${header}.${payload}.c2lnbmF0dXJl`)).to.equal(true);
    const noAlg = Buffer.from('{"typ":"JWT"}').toString('base64url');
    expect(isJwt(`${noAlg}.${payload}.c2lnbmF0dXJl`)).to.equal(false);
    expect(isAwsAccessKeyId('AKIAIOSFODNN7EXAMPLE')).to.equal(true);
    expect(isAwsAccessKeyId('AKIA1234567890123456'), 'not base32').to.equal(false);
    expect(isGithubToken(`ghp_${'a1B2'.repeat(9)}`)).to.equal(true);
    expect(isGithubToken(`ghp_${'a1B2'.repeat(8)}`)).to.equal(false);
    expect(isSlackToken('xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx')).to.equal(true);
    expect(isStripeKey(`sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`)).to.equal(true);
    expect(isStripeKey(`pk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`), 'publishable keys are public').to.equal(
      false,
    );
    expect(isUrlWithCredentials('postgres://app:Xk29fj3kLq@db.internal:5432/prod')).to.equal(true);
    expect(isUrlWithCredentials('postgres://app:${DB_PASSWORD}@db.internal:5432/prod')).to.equal(false);
    expect(isUrlWithCredentials('https://example.com/a@b')).to.equal(false);
  });

  it('high-entropy strings count only in a column named like a secret, and never a UUID', () => {
    expect(isHighEntropySecret('f8Kq2LmZ9xRt4VbN7wPc3YhJ')).to.equal(true);
    expect(isHighEntropySecret('9f1c2b7e-5d3a-4b8e-9c0f-1a2b3c4d5e6f')).to.equal(false);
    expect(isHighEntropySecret('aaaaaaaaaaaaaaaaaaaa1')).to.equal(false);
    expect(detectValue('f8Kq2LmZ9xRt4VbN7wPc3YhJ', ctx)).to.deep.equal([]);
    expect(detectValue('f8Kq2LmZ9xRt4VbN7wPc3YhJ', { ...ctx, secretName: true })).to.deep.equal([
      'high_entropy_secret',
    ]);
  });
});

describe('sensitive data: the column decision rule', () => {
  const emails = (n: number) => Array.from({ length: n }, (_, i) => `person${i}@example.com`);
  const other = (n: number) => Array.from({ length: n }, (_, i) => `value ${i}`);

  it('flags at a share of 0.8, or 0.5 when the name suggests the kind, and reports the share', () => {
    expect(decideColumn({ name: 'c', sample: [...emails(80), ...other(20)] })).to.deep.equal([
      { kind: 'email', share: 0.8 },
    ]);
    expect(decideColumn({ name: 'c', sample: [...emails(79), ...other(21)] })).to.deep.equal([]);
    expect(decideColumn({ name: 'email', sample: [...emails(50), ...other(50)] })).to.deep.equal([
      { kind: 'email', share: 0.5 },
    ]);
    expect(decideColumn({ name: 'email', sample: [...emails(49), ...other(51)] })).to.deep.equal([]);
  });

  it('a strong secret pattern flags on a single match, found among the pre-filtered candidates', () => {
    expect(
      decideColumn({ name: 'note', sample: other(500), strongCandidates: ['AKIAIOSFODNN7EXAMPLE'] }),
    ).to.deep.equal([{ kind: 'aws_access_key_id', share: 0.002 }]);
  });

  it('IPv4-shaped version strings are not addresses', () => {
    const versions = Array.from({ length: 100 }, (_, i) => `1.${i % 20}.0.${i % 10}`);
    expect(decideColumn({ name: 'component', sample: versions })).to.deep.equal([]);
    const ips = Array.from({ length: 100 }, (_, i) => `10.${i}.${i * 2}.7`);
    expect(decideColumn({ name: 'version', sample: ips })).to.deep.equal([]);
    expect(decideColumn({ name: 'source', sample: ips })).to.deep.equal([{ kind: 'ipv4', share: 1 }]);
  });
});
