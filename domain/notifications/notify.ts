/**
 * Creating notifications: one call per cause, in the transaction of the cause, so a notification exists
 * if and only if its cause committed:
 *
 *   await notify(uow, { companyId, kind: 'report.ready', to: { people: [uploaderId] },
 *                       resource: { type: 'file', id: fileId }, data: { fileId, version, reportId },
 *                       cause: `report:${reportId}:build:${build}:ready` });
 *
 * One INSERT … SELECT: the recipients are read from `people` (active people of the company: the named
 * ones, and the admins when `to.admins`), minus `to.except` (the person who caused it). `cause` names the
 * cause; it is unique per recipient, so a retried activity or a replayed request inserts nothing twice.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { UnitOfWork } from '../../db/transaction';
import type { NotificationKind } from './kinds';

/** ids, numbers and codes: never a cell value or free text someone typed */
export type NotificationData = Record<string, string | number | boolean | null>;

export interface Recipients {
  /** people by id (null/undefined entries are skipped: e.g. a version uploaded by no one known) */
  people?: ReadonlyArray<string | null | undefined>;
  /** every active admin of the company */
  admins?: boolean;
  /** never this person (who caused it) */
  except?: string | null;
}

export interface NewNotification {
  companyId: string;
  kind: NotificationKind;
  to: Recipients;
  resource: { type: string; id: string };
  data: NotificationData;
  /** names the cause: the same cause never notifies a person twice */
  cause: string;
}

function transactionOf(db: UnitOfWork | Knex.Transaction): Knex.Transaction {
  return 'trx' in db && typeof (db as UnitOfWork).emit === 'function'
    ? (db as UnitOfWork).trx
    : (db as Knex.Transaction);
}

/** Writes the notification for each recipient in `db`'s transaction; answers how many were written. */
export async function notify(db: UnitOfWork | Knex.Transaction, n: NewNotification): Promise<number> {
  const trx = transactionOf(db);
  const people = (n.to.people ?? []).filter((p): p is string => typeof p === 'string' && p.length > 0);
  if (people.length === 0 && !n.to.admins) return 0;
  const result = await trx.raw<{ rowCount: number }>(
    `insert into notifications (id, company_id, person_id, kind, resource_type, resource_id, data, dedupe_key)
     select (md5(:seed || p.id::text))::uuid, p.company_id, p.id, :kind, :resourceType, :resourceId,
            cast(:data as jsonb), :cause
       from people p
      where p.company_id = :companyId and p.status = 'active'
        and (p.id = any(cast(:people as uuid[])) or (:admins and p.role = 'admin'))
        and p.id is distinct from cast(:except as uuid)
     on conflict (company_id, person_id, dedupe_key) do nothing`,
    {
      seed: randomUUID(),
      kind: n.kind,
      resourceType: n.resource.type,
      resourceId: n.resource.id,
      data: JSON.stringify(n.data),
      cause: n.cause,
      companyId: n.companyId,
      people,
      admins: n.to.admins === true,
      except: n.to.except ?? null,
    },
  );
  return result.rowCount;
}

/**
 * invoice.finalized for the company's admins, in the transaction that issues the invoice (billing, issue 16,
 * calls this once per invoice; a second call for the same invoice writes nothing).
 */
export function notifyInvoiceFinalized(
  db: UnitOfWork | Knex.Transaction,
  invoice: {
    companyId: string;
    invoiceId: string;
    totalCents: number;
    periodStart: string;
    periodEnd: string;
  },
): Promise<number> {
  return notify(db, {
    companyId: invoice.companyId,
    kind: 'invoice.finalized',
    to: { admins: true },
    resource: { type: 'invoice', id: invoice.invoiceId },
    data: {
      invoiceId: invoice.invoiceId,
      totalCents: invoice.totalCents,
      periodStart: invoice.periodStart,
      periodEnd: invoice.periodEnd,
    },
    cause: `invoice:${invoice.invoiceId}:finalized`,
  });
}
