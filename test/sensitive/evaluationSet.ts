/**
 * The labelled evaluation set of the sensitive-data detectors: columns of real-looking values of every
 * kind, and look-alikes that must not be flagged (order numbers that pass Luhn, 16-digit ids, part numbers
 * shaped like phone numbers, hex ids, UUIDs, base64 blobs, version strings shaped like IP addresses, MAC
 * addresses, times, URLs without credentials, ...). Generated from a fixed seed, so it is the same set on
 * every run; each column carries the kinds it should be flagged for (none for a look-alike).
 *
 * Used by test/sensitive/evaluation.test.ts (asserts precision and recall ≥ 0.95 per kind) and by
 * `npm run eval:sensitive` (prints them).
 */
import { composeIBAN, isValidIBAN } from 'ibantools';
import { RE2JS } from 're2js';
import { decideColumn, SAMPLE_SIZE } from '../../domain/sensitive/decide';
import { STRONG_PREFILTER, type SensitiveKind } from '../../domain/sensitive/detectors';

export interface LabelledColumn {
  name: string;
  values: string[];
  kinds: SensitiveKind[];
  note: string;
}

/** mulberry32: a small seeded generator, so the set is reproducible. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const digits = (n: number) => Array.from({ length: n }, () => String(int(0, 9))).join('');
  const chars = (alphabet: string, n: number) =>
    Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
  return { next, int, pick, digits, chars };
}

const R = rng(20261123);
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const B64 = `${ALNUM}+/`;
const B64URL = `${ALNUM}-_`;
const HEX = '0123456789abcdef';
const FIRST = [
  'anna',
  'john',
  'maria',
  'li',
  'omar',
  'sofia',
  'peter',
  'yuki',
  'carlos',
  'emma',
  'noah',
  'fatima',
  'lukas',
  'chloe',
];
const LAST = [
  'smith',
  'muller',
  'garcia',
  'chen',
  'khan',
  'rossi',
  'dubois',
  'tanaka',
  'novak',
  'silva',
  'ivanova',
  'brown',
];
const DOMAINS = [
  'example.com',
  'mail.example.org',
  'acme.co.uk',
  'firma.de',
  'startup.io',
  'uni-paris.fr',
  'corp.example.net',
];

function many<T>(n: number, make: () => T): T[] {
  return Array.from({ length: n }, make);
}

function withNoise(values: string[], share: number, noise: readonly string[]): string[] {
  return values.map((v) => (R.next() < share ? R.pick(noise) : v));
}

// ------------------------------------------------------------------ generators of real-looking values

const email = () => {
  const f = R.pick(FIRST);
  const l = R.pick(LAST);
  const local = R.pick([`${f}.${l}`, `${f[0]}${l}`, `${f}_${l}${R.int(1, 99)}`, `${f}+news`, `${l}.${f}`]);
  return `${local}@${R.pick(DOMAINS)}`;
};

const US_AREAS = ['212', '312', '415', '617', '646', '702', '305', '206', '512', '713', '404', '503'];
const phone = () =>
  R.pick([
    () => `+1 ${R.pick(US_AREAS)}-${R.int(200, 989)}-${R.digits(4)}`,
    () => `(${R.pick(US_AREAS)}) ${R.int(200, 989)}-${R.digits(4)}`,
    () => `${R.pick(US_AREAS)}-${R.int(200, 989)}-${R.digits(4)}`,
    () => `+44 7${R.int(400, 999)} ${R.digits(6)}`,
    () => `+49 151 ${R.digits(8)}`,
    () => `+33 6 ${R.digits(2)} ${R.digits(2)} ${R.digits(2)} ${R.digits(2)}`,
    () => `+34 6${R.digits(2)} ${R.digits(3)} ${R.digits(3)}`,
    () => `+61 4${R.digits(2)} ${R.digits(3)} ${R.digits(3)}`,
  ])();

/** a US number as bare digits (4155550123): a phone only when the column's name says so */
const barePhone = () => `${R.pick(US_AREAS)}${R.int(200, 989)}${R.digits(4)}`;

function luhnDigit(body: string): string {
  for (let d = 0; d <= 9; d++) {
    const s = body + d;
    let sum = 0;
    let dbl = false;
    for (let i = s.length - 1; i >= 0; i--) {
      let x = Number(s[i]);
      if (dbl) {
        x *= 2;
        if (x > 9) x -= 9;
      }
      sum += x;
      dbl = !dbl;
    }
    if (sum % 10 === 0) return String(d);
  }
  throw new Error('unreachable');
}

const card = () => {
  const [prefix, length] = R.pick<[string, number]>([
    ['4', 16],
    ['4', 16],
    [String(R.int(51, 55)), 16],
    [String(R.int(2221, 2720)), 16],
    [R.pick(['34', '37']), 15],
    ['6011', 16],
    [String(R.int(3528, 3589)), 16],
  ]);
  const body = prefix + R.digits(length - prefix.length - 1);
  const digits = body + luhnDigit(body);
  if (length === 15) {
    return R.next() < 0.5 ? digits : `${digits.slice(0, 4)} ${digits.slice(4, 10)} ${digits.slice(10)}`;
  }
  const sep = R.pick(['', ' ', '-']);
  return digits.match(/.{4}/g)!.join(sep);
};

const IBAN_FORMATS: Array<[string, () => string]> = [
  ['DE', () => R.digits(18)],
  ['GB', () => `${R.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ', 4)}${R.digits(14)}`],
  ['NL', () => `${R.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ', 4)}${R.digits(10)}`],
  ['AT', () => R.digits(16)],
  ['CH', () => R.digits(17)],
  ['IE', () => `${R.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ', 4)}${R.digits(14)}`],
];
const iban = () => {
  for (;;) {
    const [countryCode, bban] = R.pick(IBAN_FORMATS);
    const value = composeIBAN({ countryCode, bban: bban() });
    if (value && isValidIBAN(value)) {
      return R.next() < 0.5 ? value : value.match(/.{1,4}/g)!.join(' ');
    }
  }
};

const ssn = (sep = '-') => {
  let area = R.int(1, 899);
  if (area === 666) area = 665;
  return `${String(area).padStart(3, '0')}${sep}${String(R.int(1, 99)).padStart(2, '0')}${sep}${String(R.int(1, 9999)).padStart(4, '0')}`;
};

const ipv4 = () =>
  R.pick([
    () => `${R.int(11, 223)}.${R.int(0, 255)}.${R.int(0, 255)}.${R.int(1, 254)}`,
    () => `10.${R.int(0, 255)}.${R.int(0, 255)}.${R.int(1, 254)}`,
    () => `192.168.${R.int(0, 255)}.${R.int(1, 254)}`,
    () => `172.${R.int(16, 31)}.${R.int(0, 255)}.${R.int(1, 254)}`,
  ])();

const hex4 = () => R.chars(HEX, R.int(1, 4)).replace(/^0+(?=.)/, '');
const ipv6 = () =>
  R.pick([
    () => `2001:db8:${hex4()}:${hex4()}::${hex4()}`,
    () => Array.from({ length: 8 }, hex4).join(':'),
    () => `fe80::${hex4()}:${hex4()}:${hex4()}:${hex4()}`,
    () => `2a02:${hex4()}:${hex4()}:${hex4()}:${hex4()}:${hex4()}:${hex4()}:${hex4()}`,
    () => `::ffff:${R.int(11, 223)}.${R.int(0, 255)}.${R.int(0, 255)}.${R.int(1, 254)}`,
  ])();

const pem = () => {
  const type = R.pick(['RSA PRIVATE KEY', 'PRIVATE KEY', 'EC PRIVATE KEY', 'OPENSSH PRIVATE KEY']);
  const lines = many(R.int(6, 20), () => R.chars(B64, 64));
  return `-----BEGIN ${type}-----\n${lines.join('\n')}\n${R.chars(B64, 20)}==\n-----END ${type}-----`;
};

const b64url = (obj: unknown) => Buffer.from(JSON.stringify(obj)).toString('base64url');
const jwt = () =>
  `${b64url({ alg: R.pick(['HS256', 'RS256', 'ES256']), typ: 'JWT' })}.${b64url({
    sub: String(R.int(1000, 99999)),
    name: `${R.pick(FIRST)} ${R.pick(LAST)}`,
    iat: 1700000000 + R.int(0, 9999999),
  })}.${R.chars(B64URL, 43)}`;

const awsKey = () =>
  `${R.pick(['AKIA', 'ASIA'])}${R.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 15)}${R.int(2, 7)}`;
const githubToken = () => `${R.pick(['ghp', 'gho', 'ghs'])}_${R.chars(ALNUM, 36)}`;
const slackToken = () =>
  R.next() < 0.7
    ? `xox${R.pick(['b', 'p'])}-${R.digits(12)}-${R.digits(13)}-${R.chars(ALNUM, 24)}`
    : `https://hooks.slack.com/services/T${R.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 8)}/B${R.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 8)}/${R.chars(ALNUM, 24)}`;
const stripeKey = () => `${R.pick(['sk_live', 'sk_test', 'rk_live'])}_${R.chars(ALNUM, R.int(24, 99))}`;
const googleKey = () => `AIza${R.chars(`${ALNUM}-_`, 35)}`;
const credentialUrl = () =>
  `${R.pick(['postgres', 'mysql', 'mongodb', 'https', 'amqp', 'redis'])}://${R.pick(['app', 'admin', 'svc_etl', R.pick(FIRST)])}:${R.chars(ALNUM, R.int(10, 24))}@${R.pick(['db.internal', 'queue.example.com', '10.0.3.7'])}:${R.int(1000, 9999)}/${R.pick(['prod', 'main', 'vhost'])}`;
const highEntropy = () =>
  R.pick([() => R.chars(ALNUM, R.int(24, 48)), () => R.chars(HEX, 40), () => R.chars(B64, 44)])();

// ------------------------------------------------------------------ look-alikes

const uuid = () =>
  `${R.chars(HEX, 8)}-${R.chars(HEX, 4)}-4${R.chars(HEX, 3)}-${R.pick(['8', '9', 'a', 'b'])}${R.chars(HEX, 3)}-${R.chars(HEX, 12)}`;
const luhnOrderNumber = () => {
  const body = `${R.pick(['1', '7', '8', '9'])}${R.digits(14)}`;
  return body + luhnDigit(body);
};
const id16 = () => `${R.int(1, 9)}${R.digits(15)}`;
const partNumber = () =>
  R.pick([
    () => `${R.int(100, 199)}-${R.digits(4)}-${R.digits(3)}`,
    () => `${R.digits(2)}-${R.digits(4)}-${R.digits(4)}`,
    () => `0${R.digits(2)}-${R.digits(3)}-${R.digits(4)}`,
    () => `${R.int(100, 199)}.${R.digits(3)}.${R.digits(4)}`,
  ])();
const versionString = () => `${R.int(0, 12)}.${R.int(0, 20)}.${R.int(0, 9)}.${R.int(0, 30)}`;
const base64Blob = () => Buffer.from(R.chars(ALNUM, R.int(30, 90))).toString('base64');
const mac = () => Array.from({ length: 6 }, () => R.chars('0123456789ABCDEF', 2)).join(':');
const time = () =>
  `${String(R.int(0, 23)).padStart(2, '0')}:${String(R.int(0, 59)).padStart(2, '0')}:${String(R.int(0, 59)).padStart(2, '0')}`;
const plainUrl = () =>
  `https://${R.pick(['example.com', 'shop.example.org', 'docs.acme.io'])}/${R.pick(['p', 'item', 'docs'])}/${R.int(1, 99999)}`;
const zip4 = () => `${R.digits(5)}-${R.digits(4)}`;
const ibanLike = () =>
  `${R.pick(['DE', 'GB', 'NL'])}${R.digits(2)}${R.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 18)}`;
const sentence = () =>
  `${R.pick(['Delivered', 'Returned', 'Pending review', 'Call back later', 'Paid in full'])} ${R.pick(['on time', 'by courier', 'after 2 days', 'with damage', ''])}`.trim();
const amount = () => (R.int(100, 999999) / 100).toFixed(2);
const isoDate = () =>
  `20${R.int(10, 26)}-${String(R.int(1, 12)).padStart(2, '0')}-${String(R.int(1, 28)).padStart(2, '0')}`;
const sku = () => `${R.chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ', 3)}-${R.digits(5)}`;
const semver = () => `${R.int(0, 9)}.${R.int(0, 30)}.${R.int(0, 40)}`;

const NOISE = ['', 'n/a', 'unknown', '-', 'none'];

function col(name: string, kinds: SensitiveKind[], make: () => string, n = 150, note = ''): LabelledColumn {
  return { name, kinds, values: many(n, make), note };
}

export function evaluationSet(): LabelledColumn[] {
  return [
    // email
    col('email', ['email'], email),
    col('contact_email', ['email'], email),
    col('E-Mail', ['email'], email),
    col('customer', ['email'], email, 150, 'no name hint'),
    {
      name: 'reply_to',
      kinds: ['email'],
      values: withNoise(many(150, email), 0.1, NOISE),
      note: '10% noise',
    },
    {
      name: 'mail',
      kinds: ['email'],
      values: withNoise(many(150, email), 0.35, NOISE),
      note: 'hint, 35% noise',
    },
    // phone
    col('phone', ['phone'], phone),
    col('mobile', ['phone'], phone),
    col('Telephone', ['phone'], phone),
    col('contact_number', ['phone'], phone, 150, 'no hint'),
    { name: 'fax', kinds: ['phone'], values: withNoise(many(150, phone), 0.3, NOISE), note: 'hint, noise' },
    col('phone_digits', ['phone'], barePhone, 150, 'bare digits, hint'),
    // payment card
    col('card_number', ['payment_card'], card),
    col('cc', ['payment_card'], card),
    col('pan', ['payment_card'], card),
    col('payment', ['payment_card'], card, 150, 'no hint'),
    col('Kreditkarte', ['payment_card'], card, 150, 'no hint'),
    // IBAN
    col('iban', ['iban'], iban),
    col('bank_account', ['iban'], iban),
    col('payee', ['iban'], iban, 150, 'no hint'),
    col('IBAN Nummer', ['iban'], iban),
    // US SSN
    col('ssn', ['us_ssn'], () => ssn()),
    col('social_security_number', ['us_ssn'], () => ssn()),
    col('tax_id', ['us_ssn'], () => ssn(), 150, 'no hint'),
    col('SSN', ['us_ssn'], () => ssn(''), 150, 'bare digits, hinted'),
    col('ssn_spaced', ['us_ssn'], () => ssn(' ')),
    // IPv4 / IPv6
    col('ip', ['ipv4'], ipv4),
    col('client_ip', ['ipv4'], ipv4),
    col('remote_addr', ['ipv4'], ipv4),
    col('source', ['ipv4'], ipv4, 150, 'no hint'),
    col('ipv6', ['ipv6'], ipv6),
    col('client_address', ['ipv6'], ipv6),
    col('peer', ['ipv6'], ipv6, 150, 'no hint'),
    {
      name: 'host',
      kinds: ['ipv4', 'ipv6'],
      values: many(150, () => (R.next() < 0.5 ? ipv4() : ipv6())),
      note: 'mixed',
    },
    // secrets
    col('private_key', ['private_key'], pem, 20),
    {
      name: 'notes',
      kinds: ['private_key'],
      values: [...many(200, sentence), pem()],
      note: 'one key among free text',
    },
    col('jwt', ['jwt'], jwt),
    col('authorization', ['jwt'], jwt),
    {
      name: 'payload',
      kinds: ['jwt'],
      values: [...many(100, base64Blob), jwt()],
      note: 'one JWT among base64',
    },
    col('aws_access_key_id', ['aws_access_key_id'], awsKey, 30),
    {
      name: 'config_value',
      kinds: ['aws_access_key_id'],
      values: [...many(80, sku), awsKey()],
      note: 'one key',
    },
    col('github_token', ['github_token'], githubToken, 30),
    {
      name: 'value',
      kinds: ['github_token'],
      values: [...many(120, semver), githubToken()],
      note: 'one token',
    },
    col('slack', ['slack_token'], slackToken, 30),
    {
      name: 'integration',
      kinds: ['slack_token'],
      values: [...many(60, plainUrl), slackToken()],
      note: 'one token',
    },
    col('stripe_key', ['stripe_key'], stripeKey, 20),
    { name: 'setting', kinds: ['stripe_key'], values: [...many(60, amount), stripeKey()], note: 'one key' },
    col('maps_key', ['google_api_key'], googleKey, 20),
    { name: 'param', kinds: ['google_api_key'], values: [...many(60, sku), googleKey()], note: 'one key' },
    col('dsn', ['url_with_credentials'], credentialUrl, 30),
    {
      name: 'endpoint',
      kinds: ['url_with_credentials'],
      values: [...many(80, plainUrl), credentialUrl()],
      note: 'one',
    },
    col('client_secret', ['high_entropy_secret'], highEntropy),
    col('api_key', ['high_entropy_secret'], highEntropy),
    col('password_hash', ['high_entropy_secret'], highEntropy),
    col('signing_secret', ['high_entropy_secret'], highEntropy),
    col('refresh token', ['high_entropy_secret'], highEntropy),
    {
      name: 'log_line',
      kinds: ['aws_access_key_id'],
      values: [...many(3000, () => `${sentence()} #${R.digits(8)}`), awsKey()],
      note: 'one key after 3000 distinct values (outside the sample)',
    },
    // mixed personal data
    {
      name: 'contact',
      kinds: ['email', 'phone'],
      values: many(150, () => (R.next() < 0.5 ? email() : phone())),
      note: 'emails and phones',
    },

    // look-alikes: nothing to flag
    col('order_number', [], luhnOrderNumber, 150, 'all pass Luhn, no card prefix'),
    col('order_id', [], id16, 200, '16-digit ids (some pass Luhn by chance)'),
    col('transaction_ref', [], id16, 200, '16-digit ids'),
    col('part_number', [], partNumber, 200, 'shaped like phone numbers'),
    col('invoice_id', [], barePhone, 200, 'ids that are valid US numbers as bare digits'),
    col('account_ref', [], barePhone, 200, 'bare digits, valid US numbers, no phone name'),
    col('sku_code', [], partNumber, 200, 'shaped like phone numbers'),
    col('request_id', [], () => R.chars(HEX, 32), 150, 'hex ids'),
    col('commit', [], () => R.chars(HEX, 40), 150, 'hex ids'),
    col('id', [], uuid, 150, 'UUIDs'),
    col('session_id', [], uuid, 150, 'UUIDs in a secret-named column'),
    col('thumbnail', [], base64Blob, 150, 'base64 blobs'),
    col('attachment', [], base64Blob, 150, 'base64 blobs'),
    col('app_version', [], versionString, 150, 'version strings shaped like IPv4'),
    col('tag', [], versionString, 150, 'version strings, no version name'),
    col('build', [], versionString, 150, 'version strings'),
    col('mac_address', [], mac, 150, 'MAC addresses'),
    col('time', [], time, 150, 'times'),
    col('homepage', [], plainUrl, 150, 'URLs without credentials'),
    col('zip', [], zip4, 150, 'ZIP+4'),
    col('reference', [], ibanLike, 150, 'IBAN-shaped, mod-97 mostly fails'),
    col('status_note', [], sentence, 150, 'free text'),
    col('amount', [], amount, 150, 'amounts'),
    col('date', [], isoDate, 150, 'dates'),
    col('sku', [], sku, 150, 'product codes'),
    col('release', [], semver, 150, 'semver'),
    col('name', [], () => `${R.pick(FIRST)} ${R.pick(LAST)}`, 150, 'names'),
    col('quantity', [], () => String(R.int(1, 500)), 150, 'small integers'),
    col('account_id', [], () => R.digits(10), 150, '10-digit account ids'),
    col('token_count', [], () => String(R.int(1, 100000)), 150, 'a secret-ish name over numbers'),
  ];
}

export interface KindScore {
  kind: SensitiveKind;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  precision: number;
  recall: number;
}

/**
 * Precision and recall per kind at the column level: a column counts as a true positive of a kind when it
 * is labelled with the kind and flagged for it, a false positive when flagged but not labelled, a false
 * negative when labelled but not flagged. `decide` is the column decision rule under evaluation.
 */
export function scoreEvaluation(
  columns: readonly LabelledColumn[],
  decide: (column: { name: string; values: string[] }) => SensitiveKind[],
  kinds: readonly SensitiveKind[],
): { scores: KindScore[]; mistakes: string[] } {
  const tally = new Map<SensitiveKind, { tp: number; fp: number; fn: number }>(
    kinds.map((k) => [k, { tp: 0, fp: 0, fn: 0 }]),
  );
  const mistakes: string[] = [];
  for (const column of columns) {
    const flagged = new Set(decide(column));
    const expected = new Set(column.kinds);
    for (const kind of kinds) {
      const t = tally.get(kind)!;
      if (flagged.has(kind) && expected.has(kind)) t.tp += 1;
      else if (flagged.has(kind)) {
        t.fp += 1;
        mistakes.push(`${column.name} (${column.note || 'labelled'}): flagged ${kind} wrongly`);
      } else if (expected.has(kind)) {
        t.fn += 1;
        mistakes.push(`${column.name} (${column.note || 'labelled'}): ${kind} missed`);
      }
    }
  }
  const scores = kinds.map((kind) => {
    const { tp, fp, fn } = tally.get(kind)!;
    return {
      kind,
      truePositives: tp,
      falsePositives: fp,
      falseNegatives: fn,
      precision: tp + fp === 0 ? 1 : tp / (tp + fp),
      recall: tp + fn === 0 ? 1 : tp / (tp + fn),
    };
  });
  return { scores, mistakes };
}

const prefilter = RE2JS.compile(STRONG_PREFILTER);

/**
 * The column decision as the report pass makes it: the first SAMPLE_SIZE distinct trimmed non-null values
 * (the report pass samples them in DuckDB) plus the values of the whole column that the strong-secret RE2
 * pre-filter picks (re2js here, DuckDB's RE2 there).
 */
export function decideLikeTheReport(column: { name: string; values: readonly string[] }): SensitiveKind[] {
  const distinct = [...new Set(column.values.map((v) => v.trim()).filter((v) => v !== ''))];
  return decideColumn({
    name: column.name,
    sample: distinct.slice(0, SAMPLE_SIZE),
    strongCandidates: distinct.filter((v) => prefilter.matcher(v).find()),
  }).map((k) => k.kind);
}
