/**
 * Presenters: the fields of people, API keys and companies a caller sees, listed one by one so a row never
 * leaks (password hashes, key fingerprints, the Google subject).
 */
import type { ApiKeyRow, CompanyRow, PersonRow } from './access';
import { keyPrefix } from './keyFormat';

export function presentPerson(p: PersonRow) {
  return {
    id: p.id,
    email: p.email,
    name: p.name,
    role: p.role,
    status: p.status,
    createdAt: p.createdAt.toISOString(),
  };
}

export function presentApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    prefix: keyPrefix(row.identifier),
    ownerId: row.personId,
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
  };
}

export function presentCompany(c: CompanyRow) {
  return {
    id: c.id,
    name: c.name,
    status: c.status,
    plan: c.plan,
    createdAt: c.createdAt.toISOString(),
  };
}
