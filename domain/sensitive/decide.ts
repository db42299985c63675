/**
 * The column decision rule (README "Sensitive data"). Input: a column's name and a bounded set of its
 * distinct non-null values (trimmed) — a sample of at most SAMPLE_SIZE distinct values, plus every distinct
 * value of the whole column that a strong secret pattern pre-filter picked out. Output: the kinds the column
 * is flagged for, each with its share (validated matches / values looked at), never a value.
 *
 * A kind flags the column when
 * - its share reaches FLAG_SHARE (0.8), or NAME_HINT_SHARE (0.5) when the column's name suggests the kind;
 * - or it is a strong secret kind (private key, JWT, AWS/GitHub/Slack/Stripe/Google key, URL with a
 *   password) with at least one validated match;
 * - or the column is a mix of personal data: all validated kinds together reach FLAG_SHARE and this kind
 *   alone reaches MIXED_SHARE (0.2) — a "contact" column of emails and phone numbers.
 * IPv4 has one more condition, against version strings shaped like addresses (1.2.0.4): the column's name
 * must not suggest a version, and at least 20% of the matched addresses must have a part of 32 or more.
 * Phone has one too, against identifiers that happen to be valid US numbers (an invoice_id of 4155550100…):
 * when every matched value is a bare run of digits (no `+`, space, dash, dot or parenthesis), the column's
 * name must suggest a phone.
 */
import { detectValue, ipv4Octets, SENSITIVE_KINDS, STRONG_KINDS, type SensitiveKind } from './detectors';

export const SAMPLE_SIZE = 500;
export const FLAG_SHARE = 0.8;
export const NAME_HINT_SHARE = 0.5;
export const MIXED_SHARE = 0.2;

const HINTS: Partial<Record<SensitiveKind, RegExp>> = {
  email: /e-?mail|mail/i,
  phone: /phone|tel(?:ephone)?\b|mobile|cell|fax|msisdn|^tel/i,
  payment_card: /card|^cc[_ -]?|pan\b|credit/i,
  iban: /iban|bank|account/i,
  us_ssn: /ssn|social[_ -]?sec/i,
  ipv4: /(?:^|[_ -])ip(?:$|[_ -]|v4|addr)|address|host|remote|client/i,
  ipv6: /(?:^|[_ -])ip(?:$|[_ -]|v6|addr)|address|host|remote|client/i,
};

/** A name that suggests a secret (high-entropy strings count there only). */
export const SECRET_NAME =
  /secret|token|passw|passwd|pwd|api[_ -]?key|apikey|access[_ -]?key|private[_ -]?key|credential|auth|bearer|signing|salt|session/i;
const SSN_NAME = /ssn|social[_ -]?sec/i;
const BARE_DIGITS = /^\d+$/;
const VERSION_NAME = /version|^ver$|[_ -]ver$|release|build|firmware|revision|semver/i;

export interface KindShare {
  kind: SensitiveKind;
  /** validated matches / distinct values looked at, 4 decimals */
  share: number;
}

export interface ColumnValues {
  name: string;
  /** distinct non-null values of the sample (trimmed) */
  sample: readonly string[];
  /** distinct values of the whole column picked by the strong-pattern pre-filter (may overlap the sample) */
  strongCandidates?: readonly string[];
}

function round4(x: number): number {
  return Math.round(x * 10000) / 10000;
}

export function decideColumn(column: ColumnValues): KindShare[] {
  const values = [...new Set([...column.sample, ...(column.strongCandidates ?? [])])];
  if (values.length === 0) return [];
  const ctx = { bareSsn: SSN_NAME.test(column.name), secretName: SECRET_NAME.test(column.name) };
  const counts = new Map<SensitiveKind, number>();
  let anyKind = 0;
  let bigOctet = 0;
  let formattedPhones = 0;
  for (const value of values) {
    const kinds = detectValue(value, ctx);
    if (kinds.length > 0) anyKind += 1;
    for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
    if (kinds.includes('ipv4') && (ipv4Octets(value) ?? []).some((o) => o >= 32)) bigOctet += 1;
    if (kinds.includes('phone') && !BARE_DIGITS.test(value)) formattedPhones += 1;
  }
  const total = values.length;
  const mixed = anyKind / total >= FLAG_SHARE;
  const flagged: KindShare[] = [];
  for (const kind of SENSITIVE_KINDS) {
    const n = counts.get(kind) ?? 0;
    if (n === 0) continue;
    const share = n / total;
    const hinted = HINTS[kind]?.test(column.name) ?? false;
    let flag =
      STRONG_KINDS.includes(kind) ||
      share >=
        (hinted || (kind === 'high_entropy_secret' && ctx.secretName) ? NAME_HINT_SHARE : FLAG_SHARE) ||
      (mixed && share >= MIXED_SHARE);
    if (flag && kind === 'ipv4') flag = !VERSION_NAME.test(column.name) && bigOctet / n >= 0.2;
    if (flag && kind === 'phone' && formattedPhones === 0) flag = hinted;
    if (flag) flagged.push({ kind, share: round4(share) });
  }
  return flagged;
}
