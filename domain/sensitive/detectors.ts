/**
 * Detectors of personal and secret data. Each one validates, not only matches: an email needs a valid
 * domain, a phone number must be valid for its country (libphonenumber-js), a payment card passes Luhn with a
 * known issuer prefix and length, an IBAN passes mod-97 with its country's length (ibantools), a US SSN
 * excludes the area, group and serial numbers never issued, an IP address is parsed octet by octet, a JWT's
 * header decodes to JSON naming an algorithm, and so on. Pure functions over one trimmed cell value; the
 * column decision rule is in ./decide.ts. Detectors never log or return the value.
 */
import { isIPv6 } from 'node:net';
import { isValidPhoneNumber, parsePhoneNumberFromString } from 'libphonenumber-js';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';

export const SENSITIVE_KINDS = [
  'email',
  'phone',
  'payment_card',
  'iban',
  'us_ssn',
  'ipv4',
  'ipv6',
  'private_key',
  'jwt',
  'aws_access_key_id',
  'github_token',
  'slack_token',
  'stripe_key',
  'google_api_key',
  'url_with_credentials',
  'high_entropy_secret',
] as const;
export type SensitiveKind = (typeof SENSITIVE_KINDS)[number];

/** Kinds whose pattern is specific enough that one validated match flags the column. */
export const STRONG_KINDS: readonly SensitiveKind[] = [
  'private_key',
  'jwt',
  'aws_access_key_id',
  'github_token',
  'slack_token',
  'stripe_key',
  'google_api_key',
  'url_with_credentials',
];

/** Values longer than this are not looked at (a private key block is the longest thing detected). */
export const MAX_DETECTED_LENGTH = 8192;

// ------------------------------------------------------------------ email

const EMAIL = /^([A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*)@([A-Za-z0-9.-]+)$/;
const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

export function isEmail(value: string): boolean {
  if (value.length > 254) return false;
  const m = EMAIL.exec(value);
  if (!m) return false;
  if (m[1].length > 64) return false;
  const labels = m[2].split('.');
  if (labels.length < 2) return false;
  if (!labels.every((l) => LABEL.test(l))) return false;
  const tld = labels[labels.length - 1];
  return /^[A-Za-z]{2,63}$/.test(tld) || /^xn--[a-z0-9-]{2,59}$/i.test(tld);
}

// ------------------------------------------------------------------ phone

const PHONE_SHAPE = /^(?:\+|00)?[\d\s().-]{6,24}$/;

/**
 * A phone number valid for its country: international form (`+` or `00`) for any country; without a
 * country code, a US/Canada national number of 10 digits (optionally led by 1). A bare run of digits that
 * is not 10/11 long is never a phone number here (ids, part numbers).
 */
export function isPhone(value: string): boolean {
  if (!PHONE_SHAPE.test(value)) return false;
  const digits = value.replace(/\D/g, '');
  if (digits.length < 7 || digits.length > 15) return false;
  // separators must group digits, not split them one by one (part numbers like 1-2-3-4-5-6-7)
  const groups = value.split(/[\s().-]+/).filter(Boolean);
  if (groups.length > 6) return false;
  if (value.startsWith('+') || value.startsWith('00')) {
    const international = value.startsWith('00') ? `+${value.slice(2)}` : value;
    return isValidPhoneNumber(international);
  }
  if (!(digits.length === 10 || (digits.length === 11 && digits.startsWith('1')))) return false;
  const parsed = parsePhoneNumberFromString(value, 'US');
  return parsed !== undefined && parsed.isValid();
}

// ------------------------------------------------------------------ payment card

export function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes (IIN ranges) and the lengths each issues. */
const CARD_RANGES: ReadonlyArray<{ from: number; to: number; digits: number; lengths: number[] }> = [
  { from: 4, to: 4, digits: 1, lengths: [13, 16, 19] }, // Visa
  { from: 51, to: 55, digits: 2, lengths: [16] }, // Mastercard
  { from: 2221, to: 2720, digits: 4, lengths: [16] }, // Mastercard 2-series
  { from: 34, to: 34, digits: 2, lengths: [15] }, // American Express
  { from: 37, to: 37, digits: 2, lengths: [15] },
  { from: 6011, to: 6011, digits: 4, lengths: [16, 17, 18, 19] }, // Discover
  { from: 644, to: 649, digits: 3, lengths: [16, 17, 18, 19] },
  { from: 65, to: 65, digits: 2, lengths: [16, 17, 18, 19] },
  { from: 300, to: 305, digits: 3, lengths: [14, 15, 16, 17, 18, 19] }, // Diners Club
  { from: 36, to: 36, digits: 2, lengths: [14, 15, 16, 17, 18, 19] },
  { from: 38, to: 39, digits: 2, lengths: [16, 17, 18, 19] },
  { from: 3528, to: 3589, digits: 4, lengths: [16, 17, 18, 19] }, // JCB
  { from: 62, to: 62, digits: 2, lengths: [16, 17, 18, 19] }, // UnionPay
  { from: 5018, to: 5018, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] }, // Maestro
  { from: 5020, to: 5020, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { from: 5038, to: 5038, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { from: 5893, to: 5893, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { from: 6304, to: 6304, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { from: 6759, to: 6759, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { from: 6761, to: 6763, digits: 4, lengths: [12, 13, 14, 15, 16, 17, 18, 19] },
  { from: 2200, to: 2204, digits: 4, lengths: [16, 17, 18, 19] }, // Mir
];

/** Digits in groups separated by single spaces or dashes, or one run of digits. */
const CARD_SHAPE = /^\d{4,6}(?:[ -]?\d{2,7}){1,4}$/;

export function isPaymentCard(value: string): boolean {
  if (!CARD_SHAPE.test(value)) return false;
  const digits = value.replace(/[ -]/g, '');
  if (digits.length < 12 || digits.length > 19) return false;
  if (/^(\d)\1+$/.test(digits)) return false;
  const known = CARD_RANGES.some(
    (r) =>
      Number(digits.slice(0, r.digits)) >= r.from &&
      Number(digits.slice(0, r.digits)) <= r.to &&
      r.lengths.includes(digits.length),
  );
  return known && luhn(digits);
}

// ------------------------------------------------------------------ IBAN

export function isIban(value: string): boolean {
  if (!/^[A-Za-z]{2}\d{2}[A-Za-z0-9 ]{10,40}$/.test(value)) return false;
  const electronic = electronicFormatIBAN(value);
  return electronic !== null && isValidIBAN(electronic.toUpperCase());
}

// ------------------------------------------------------------------ US SSN

/** Numbers published in advertising and never valid (the Woolworth wallet card, and others). */
const SSN_NEVER = new Set(['078051120', '219099999', '457555462']);

/**
 * A US Social Security number: area 001–899 except 666, group 01–99, serial 0001–9999. Written with
 * dashes or spaces; nine bare digits only count when `bare` is allowed (a column named like an SSN).
 */
export function isUsSsn(value: string, bare = false): boolean {
  const m =
    /^(\d{3})[- ](\d{2})[- ](\d{4})$/.exec(value) ?? (bare ? /^(\d{3})(\d{2})(\d{4})$/.exec(value) : null);
  if (!m) return false;
  const area = Number(m[1]);
  if (area === 0 || area === 666 || area >= 900) return false;
  if (m[2] === '00' || m[3] === '0000') return false;
  return !SSN_NEVER.has(m[1] + m[2] + m[3]);
}

// ------------------------------------------------------------------ IP addresses

/** Dotted-quad IPv4, each part 0–255 without leading zeros; the parts, or null. */
export function ipv4Octets(value: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value);
  if (!m) return null;
  const parts = m.slice(1);
  if (parts.some((p) => p.length > 1 && p.startsWith('0'))) return null;
  const octets = parts.map(Number);
  return octets.every((o) => o <= 255) ? octets : null;
}

export function isIpv4(value: string): boolean {
  return ipv4Octets(value) !== null;
}

export function isIpv6(value: string): boolean {
  // at least two groups of hex digits; node's parser is strict (8 groups, or one ::, optional zone-free
  // embedded IPv4); time stamps like 12:30:45 and MAC addresses fail it
  if (value.length > 45 || !value.includes(':')) return false;
  return isIPv6(value);
}

// ------------------------------------------------------------------ secrets

function base64UrlJson(segment: string): unknown {
  try {
    const text = Buffer.from(segment, 'base64url').toString('utf8');
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isJwt(value: string): boolean {
  const m = /^(eyJ[A-Za-z0-9_-]{5,})\.(eyJ[A-Za-z0-9_-]{5,})\.([A-Za-z0-9_-]{0,1000})$/.exec(value);
  if (!m) return false;
  const header = base64UrlJson(m[1]);
  const payload = base64UrlJson(m[2]);
  return (
    typeof header === 'object' &&
    header !== null &&
    typeof (header as { alg?: unknown }).alg === 'string' &&
    typeof payload === 'object' &&
    payload !== null
  );
}

const PRIVATE_KEY =
  /^-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----[\r\n]+([\s\S]+?)[\r\n]+-----END \1-----\s*$/;

export function isPrivateKey(value: string): boolean {
  const m = PRIVATE_KEY.exec(value);
  if (!m) return false;
  // the body is base64 (PGP and encrypted PEM carry a few header lines first)
  const body = m[2]
    .split(/\r?\n/)
    .filter((line) => !/^[A-Za-z-]+: /.test(line) && line.trim() !== '')
    .join('');
  return body.length >= 64 && /^[A-Za-z0-9+/=]+$/.test(body);
}

export function isAwsAccessKeyId(value: string): boolean {
  return /^(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}$/.test(value) && /\d/.test(value.slice(4));
}

export function isGithubToken(value: string): boolean {
  return (
    /^gh[pousr]_[A-Za-z0-9]{36}$/.test(value) || /^github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}$/.test(value)
  );
}

export function isSlackToken(value: string): boolean {
  return (
    /^xox[baprse]-\d{6,15}-[0-9A-Za-z-]{8,}$/.test(value) ||
    /^https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]{6,12}\/B[A-Z0-9]{6,12}\/[A-Za-z0-9]{20,32}$/.test(
      value,
    )
  );
}

export function isStripeKey(value: string): boolean {
  return /^(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,99}$/.test(value);
}

export function isGoogleApiKey(value: string): boolean {
  return /^AIza[0-9A-Za-z_-]{35}$/.test(value);
}

export function isUrlWithCredentials(value: string): boolean {
  const m =
    /^[a-z][a-z0-9+.-]{1,20}:\/\/([^\s/:@]{1,100}):([^\s/@]{1,200})@[A-Za-z0-9.-]+(?::\d{1,5})?(?:[/?#]\S*)?$/i.exec(
      value,
    );
  // a placeholder like user:password@ or ${PASS} is not a credential
  return m !== null && !/^(?:\*+|x+|password|pass|secret|<[^>]*>|\$\{[^}]*\}|\$\w+)$/i.test(m[2]);
}

/** Shannon entropy in bits per character. */
export function entropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A high-entropy string (only counted in a column whose name suggests a secret): 16–512 characters
 * without spaces, not a UUID (an id), at least 3.5 bits of entropy per character (3.0 for hex strings,
 * whose alphabet has 16 symbols), mixing at least two kinds of characters.
 */
export function isHighEntropySecret(value: string): boolean {
  if (value.length < 16 || value.length > 512 || /\s/.test(value)) return false;
  if (UUID.test(value)) return false;
  const classes = [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/].filter((re) => re.test(value)).length;
  if (classes < 2) return false;
  const hex = /^[0-9a-f]+$/i.test(value);
  return entropy(value) >= (hex ? 3.0 : 3.5);
}

export interface DetectContext {
  /** the column's name suggests an SSN: nine bare digits count */
  bareSsn: boolean;
  /** the column's name suggests a secret: high-entropy strings count */
  secretName: boolean;
}

/** Every kind one trimmed value validates as (usually none or one). */
export function detectValue(value: string, ctx: DetectContext): SensitiveKind[] {
  if (value.length === 0 || value.length > MAX_DETECTED_LENGTH) return [];
  const kinds: SensitiveKind[] = [];
  const first = value.charCodeAt(0);
  if (first === 45 /* - */) {
    if (isPrivateKey(value)) kinds.push('private_key');
    return kinds;
  }
  if (value.includes('@')) {
    if (isEmail(value)) kinds.push('email');
    else if (isUrlWithCredentials(value)) kinds.push('url_with_credentials');
    return kinds;
  }
  if (isJwt(value)) kinds.push('jwt');
  else if (isAwsAccessKeyId(value)) kinds.push('aws_access_key_id');
  else if (isGithubToken(value)) kinds.push('github_token');
  else if (isSlackToken(value)) kinds.push('slack_token');
  else if (isStripeKey(value)) kinds.push('stripe_key');
  else if (isGoogleApiKey(value)) kinds.push('google_api_key');
  if (kinds.length > 0) return kinds;
  if (isIpv4(value)) return ['ipv4'];
  if (isIpv6(value)) return ['ipv6'];
  if (isIban(value)) return ['iban'];
  if (isUsSsn(value, ctx.bareSsn)) return ['us_ssn'];
  if (isPaymentCard(value)) kinds.push('payment_card');
  else if (isPhone(value)) kinds.push('phone');
  if (kinds.length === 0 && ctx.secretName && isHighEntropySecret(value)) kinds.push('high_entropy_secret');
  return kinds;
}

/**
 * An RE2 pre-filter (run by DuckDB over every value of a column, on its trimmed text) that picks the
 * values that may be strong secrets, so a single key anywhere in a column is found even when it is not in
 * the sample. Candidates are then validated by `detectValue`.
 */
export const STRONG_PREFILTER =
  '^\\s*-----BEGIN [A-Z ]*PRIVATE KEY|^\\s*eyJ[A-Za-z0-9_-]+\\.eyJ|^\\s*(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\\s*$|^\\s*gh[pousr]_[A-Za-z0-9]{36}\\s*$|^\\s*github_pat_|^\\s*xox[baprse]-|^\\s*https://hooks\\.slack\\.com/services/|^\\s*(?:sk|rk)_(?:live|test)_|^\\s*AIza[0-9A-Za-z_-]{35}\\s*$|^\\s*[a-zA-Z][a-zA-Z0-9+.-]*://[^/\\s:@]+:[^/\\s@]+@';

/** Values shorter than this (bytes) cannot hold a strong secret: the pre-filter skips them cheaply. */
export const STRONG_MIN_BYTES = 12;
