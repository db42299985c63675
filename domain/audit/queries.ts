/**
 * Reading the audit log (GET /audit-log, `audit:read`: admins' sessions and keys holding it). Newest first
 * by (created_at, id); each filter is an indexed equality (or a prefix of `action`) before that keyset,
 * so a deep page costs what the first does (docs: README "Audit log"; bench/audit.ts measures it).
 */
import type { Knex } from 'knex';
import { BadRequestError, ForbiddenError } from '../../common/errors';
import { AuditLogEntry } from '../../db/models';

export interface AuditReader {
  companyId: string;
  role: 'admin' | 'employee';
}

export interface AuditFilters {
  actorId?: string;
  apiKeyId?: string;
  /** exact (`file.deleted`) or a prefix ending with `*` (`file.*`) */
  action?: string;
  resourceType?: string;
  resourceId?: string;
  /** ISO 8601: entries at or after */
  from?: string;
  /** ISO 8601: entries before */
  to?: string;
}

/** The filters in one fixed order (REST's query parameters as documented). */
export const AUDIT_FILTERS = [
  'actorId',
  'apiKeyId',
  'action',
  'resourceType',
  'resourceId',
  'from',
  'to',
] as const;

/**
 * The name of the list a filter set reads, which its cursors are sealed to: the filters in their fixed order,
 * so the same set written in another order (a URL's parameters, GraphQL's arguments) names the same list.
 */
export function auditListName(filters: AuditFilters): string {
  const named = AUDIT_FILTERS.filter((name) => filters[name] !== undefined).map((name) => [
    name,
    filters[name],
  ]);
  return `audit-log:${JSON.stringify(Object.fromEntries(named))}`;
}

function instant(name: string, value: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new BadRequestError(`query.${name} must be a date-time`);
  return at;
}

/** The company's audit entries matching the filters (a query the adapter pages, newest first). */
export function auditLogOf(reader: AuditReader, db: Knex | Knex.Transaction, filters: AuditFilters) {
  if (reader.role !== 'admin') throw new ForbiddenError('only admins read the audit log');
  const query = AuditLogEntry.scoped(reader.companyId, db);
  if (filters.actorId) void query.where('auditLog.actorPersonId', filters.actorId);
  if (filters.apiKeyId) void query.where('auditLog.actorApiKeyId', filters.apiKeyId);
  if (filters.action) {
    if (filters.action.endsWith('*')) {
      const prefix = filters.action.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`);
      void query.where('auditLog.action', 'like', `${prefix}%`);
    } else void query.where('auditLog.action', filters.action);
  }
  if (filters.resourceType) void query.where('auditLog.resourceType', filters.resourceType);
  if (filters.resourceId) void query.where('auditLog.resourceId', filters.resourceId);
  // as instants: PostgreSQL never parses the text itself (years it refuses, leap seconds)
  const from = filters.from ? instant('from', filters.from) : undefined;
  const to = filters.to ? instant('to', filters.to) : undefined;
  // as GET /analytics: a window that ends before it begins is a mistake, not an empty list
  if (from && to && from > to) throw new BadRequestError('query.from must not be after query.to');
  if (from) void query.where('auditLog.createdAt', '>=', from);
  if (to) void query.where('auditLog.createdAt', '<', to);
  return query;
}
