import { createHash } from 'node:crypto';
import { uuidv7 } from '../../common/ids';
import type { Knex } from 'knex';
import type { TransactionOrKnex } from 'objection';
import { currentRequest } from '../../common/requestContext';
import type { AuditActorType, AuditOutcome } from '../../db/models';
import { KEY_PREFIX } from '../identity/keyFormat';

export interface AuditEntry {
  companyId: string;
  /** the person who acted (for a key: its owner); null when the service acted by itself */
  personId: string | null;
  apiKeyId?: string | null;
  action: string; // dotted: api_key.created, webhook_endpoint.disabled (docs/audit.md lists them)
  resourceType: string;
  resourceId?: string | null;
  /** success unless told: a refused sign-in is `failure`, a reused refresh token `denied` */
  outcome?: AuditOutcome;
  /** the request's, when written while serving one (common/requestContext.ts) */
  correlationId?: string | null;
  /** the request's client address, when written while serving one */
  clientAddress?: string | null;
  /** which fields changed and how, in names and small values — never secrets nor cell values */
  details?: Record<string, unknown>;
}

/**
 * Who acted in a request, as an audit entry starts: the company, the person (for an API key its owner),
 * the key if one was used, and the request's correlation id. Spread into recordAudit's entry.
 */
export function auditActor(
  actor: { companyId: string; personId: string; apiKeyId?: string | null },
  correlationId: string | undefined,
): Pick<AuditEntry, 'companyId' | 'personId' | 'apiKeyId' | 'correlationId'> {
  return {
    companyId: actor.companyId,
    personId: actor.personId,
    apiKeyId: actor.apiKeyId ?? null,
    correlationId: correlationId ?? null,
  };
}

/** Field names whose values never enter the audit log (their names may: "password changed"). */
const SECRET_FIELD = /pass(word)?|secret|token|hash|fingerprint|cookie|authorization|api_?key$/i;

/**
 * The details as stored: values of secret-looking fields replaced by `"[redacted]"`, nested objects and
 * arrays walked (at most 4 levels deep, then cut), long strings cut at 200 characters.
 */
export function safeDetails(details: unknown, depth = 0): unknown {
  if (details === null || typeof details !== 'object') {
    return typeof details === 'string' && details.length > 200 ? `${details.slice(0, 200)}…` : details;
  }
  if (depth >= 4) return '[cut]';
  if (Array.isArray(details)) return details.slice(0, 50).map((v) => safeDetails(v, depth + 1));
  return Object.fromEntries(
    Object.entries(details as Record<string, unknown>).map(([k, v]) => [
      k,
      SECRET_FIELD.test(k) && v !== undefined && typeof v !== 'boolean'
        ? '[redacted]'
        : safeDetails(v, depth + 1),
    ]),
  );
}

export function actorTypeOf(entry: Pick<AuditEntry, 'personId' | 'apiKeyId'>): AuditActorType {
  if (entry.apiKeyId) return 'apiKey';
  return entry.personId ? 'person' : 'system';
}

/**
 * Benchmarks only (bench/audit.ts measures what the entry costs a write route, on against off in one run):
 * never turned off in service.
 */
export const auditWrites = { enabled: true };

/**
 * Writes an audit record; pass the transaction of the change so both commit or neither does. The key's
 * prefix (svc_live_<identifier>) is copied in the same statement, so the entry names the key for good. The
 * correlation id and client address default to the request being served (common/requestContext.ts).
 */
export async function recordAudit(trx: TransactionOrKnex, entry: AuditEntry): Promise<void> {
  if (!auditWrites.enabled) return;
  // a named (prepared) statement: PostgreSQL parses it once per connection, not on every audited write
  await (trx as Knex).raw(AUDIT_INSERT, auditBindings(entry)).options({ name: 'audit_log.insert' });
}

/**
 * A change made by one statement, with its audit entry written by the same statement (a data-modifying CTE:
 * `with change as (<update … returning *>), entry as (insert into audit_log …) select * from change`), so the
 * entry costs the request no round trip of its own. Answers the change's rows (as `returning *` would). Use it
 * where a command's change is one statement; otherwise `recordAudit` in the same transaction.
 */
export async function changeWithAudit<Row>(
  trx: Knex.Transaction,
  change: Knex.QueryBuilder,
  entry: AuditEntry,
): Promise<Row[]> {
  // the change compiled once by knex; the statement around it is fixed text, so the entry adds no query building
  // (with the entry off — benchmarks only — the change alone, run the same way, so the two differ by the entry)
  const compiled = change.toSQL();
  const sql = auditWrites.enabled
    ? `with "change" as (${compiled.sql}), "entry" as (${AUDIT_INSERT}) select * from "change"`
    : compiled.sql;
  const bindings = auditWrites.enabled
    ? [...compiled.bindings, ...auditBindings(entry)]
    : [...compiled.bindings];
  // a named (prepared) statement named after its text: each shape of change is parsed and planned once per
  // connection; rows come back through knex's response mapping as a query's would
  const name = statementName(sql);
  let result: { rows: Array<Record<string, unknown>> };
  try {
    result = (await trx.raw(sql, bindings).options({ name })) as typeof result;
  } catch (err) {
    // the changed table gained or lost a column since this connection prepared the statement (a migration
    // while the service runs): PostgreSQL refuses the prepared `select *` once; later statements take new names
    if (isStaleResultType(err)) forgetStatementNames();
    throw err;
  }
  const mapRows = (trx.client as Knex.Client).config.postProcessResponse as
    ((rows: unknown, context?: unknown) => unknown) | undefined;
  return (mapRows ? mapRows(result.rows) : result.rows) as Row[];
}

const statementNames = new Map<string, string>();
/** bumped when PostgreSQL refuses a prepared statement whose result type changed: new names, new statements */
let statementGeneration = 0;

/**
 * `audit_log.change.<generation>.<sha1 of the text>`, remembered for the few shapes of change there are (at most
 * 200).
 */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) {
    name = `audit_log.change.${statementGeneration}.${createHash('sha1').update(sql).digest('base64url')}`;
    if (statementNames.size < 200) statementNames.set(sql, name);
  }
  return name;
}

function forgetStatementNames(): void {
  statementGeneration += 1;
  statementNames.clear();
}

/** PostgreSQL's refusal of a prepared statement whose `select *` now has other columns (SQLSTATE 0A000). */
function isStaleResultType(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}

/**
 * The entry's INSERT as fixed SQL text (no query builder, no identifier mapping: it runs on every audited
 * write). Row-level security checks its company like any insert; the key's prefix (svc_live_<identifier>) is
 * copied from api_keys in the same statement, so the entry names the key for good.
 */
const AUDIT_INSERT = `insert into audit_log (id, company_id, actor_person_id, actor_api_key_id, actor_type,
    actor_key_prefix, action, resource_type, resource_id, outcome, correlation_id, client_address, details)
  values (?, ?, ?, ?::uuid, ?, (select ? || k.identifier from api_keys k where k.id = ?::uuid), ?, ?, ?, ?, ?, ?,
    ?::jsonb)`;

function auditBindings(entry: AuditEntry): Knex.RawBinding[] {
  const request = currentRequest();
  const keyId = entry.apiKeyId ?? null;
  return [
    uuidv7(),
    entry.companyId,
    entry.personId,
    keyId,
    actorTypeOf(entry),
    KEY_PREFIX,
    keyId,
    entry.action,
    entry.resourceType,
    entry.resourceId ?? null,
    entry.outcome ?? 'success',
    entry.correlationId ?? request?.correlationId ?? null,
    entry.clientAddress ?? request?.clientAddress ?? null,
    JSON.stringify(safeDetails(entry.details ?? {})),
  ];
}
