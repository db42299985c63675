/**
 * Issue 11: `Model.scoped(companyId, trx)` (db/models/base.ts; `Company.scoped` for the company's own row)
 * is the one way application code reads tenant rows. This test makes a new hand-scoped query stand out: it
 * reads the sources of domain/ and api/ and fails on a `where` that names a company by hand
 * (`.where({ companyId: … })`, `.where({ id: actor.companyId })`, `.where('companyId', …)`), unless the
 * place is listed below with the reason it cannot use `scoped()`. A listed place that no longer matches
 * fails too, so the list stays honest.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../helpers/env';

const SCANNED = ['domain', 'api'];

/** A `where` naming a company: an object with a companyId key or value, or a companyId column. */
const HAND_SCOPED = [
  /\.(?:and|or)?where(?:Not)?\(\s*\{[^}]*\b[Cc]ompany(?:Id|_id)\b[^}]*\}/g,
  /\.(?:and|or)?where(?:Not|In)?\(\s*['"`][\w.]*\b(?:companyId|company_id)['"`]/g,
];

/** [file, a part of the matched text, why this place does not use scoped()] */
const ALLOWED: Array<[string, string, string]> = [
  [
    'domain/identity/authentication.ts',
    "'p.companyId': claims.companyId",
    'session lookup: one statement acting for the signed token company, joining sessions, people, companies',
  ],
  [
    'domain/identity/accounts.ts',
    'id: used.companyId',
    'public account-token route: the company is known from the one-time token (system task account-tokens)',
  ],
  [
    'domain/identity/demo.ts',
    'companyId: company.id',
    'the demo company is found before it is known (system task demo)',
  ],
  ['domain/identity/demo.ts', 'companyId: existing.companyId', 'demo seeding (system task demo)'],
  ['domain/identity/demo.ts', 'companyId: demo.companyId', 'demo seeding (system task demo)'],
  ['domain/identity/demo.ts', 'id: demo.companyId', 'demo sign-in reads the demo company (system task demo)'],
  [
    'domain/billing/finalize.ts',
    ".whereIn('companyId'",
    'finalising a period reads and writes the invoices, plan history and usage of a chunk of companies at once (system task billing)',
  ],
];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sources(full));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** Every hand-scoped `where` in the scanned sources: [file relative to the root, matched text]. */
export function handScopedQueries(root: string): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  for (const dir of SCANNED) {
    for (const file of sources(path.join(root, dir))) {
      const text = readFileSync(file, 'utf8');
      for (const pattern of HAND_SCOPED) {
        for (const m of text.matchAll(pattern)) found.push([path.relative(root, file), m[0]]);
      }
    }
  }
  return found;
}

function allowed(file: string, match: string): boolean {
  return ALLOWED.some(([f, part]) => f === file && match.includes(part));
}

describe('tenant rows are read through scoped()', () => {
  it('domain/ and api/ build no hand-scoped tenant query outside the allow-list', () => {
    const offending = handScopedQueries(ROOT)
      .filter(([file, match]) => !allowed(file, match))
      .map(([file, match]) => `${file}: ${match.replace(/\s+/g, ' ')}`);
    expect(offending, 'use Model.scoped(companyId, trx), or list the place with its reason').to.deep.equal(
      [],
    );
  });

  it('every allow-list entry still matches a query (remove the ones that moved to scoped())', () => {
    const found = handScopedQueries(ROOT);
    const stale = ALLOWED.filter(([f, part]) => !found.some(([file, m]) => file === f && m.includes(part)));
    expect(stale.map(([f, part]) => `${f}: ${part}`)).to.deep.equal([]);
  });

  it('recognises the hand-scoped forms it is meant to catch', () => {
    const samples = [
      "db('people').where({ companyId: actor.companyId })",
      "trx('companies').where({ id: actor.companyId }).forUpdate()",
      "knex('fileUsage').where({\n  periodKey: key,\n  companyId,\n})",
      "db('auditLog').where('companyId', companyId)",
      "db('audit_log').whereIn('audit_log.company_id', ids)",
    ];
    for (const sample of samples) {
      expect(
        HAND_SCOPED.some((p) => sample.match(p)),
        sample,
      ).to.equal(true);
    }
    expect(HAND_SCOPED.some((p) => 'Person.scoped(actor.companyId, db).where({ id })'.match(p))).to.equal(
      false,
    );
  });
});
