/**
 * Who sees billing: admins of the company (their sessions, and keys holding `billing:read`; the route
 * table enforces both). Every read starts from the actor's company (`Invoice.scoped`), so another
 * company's invoice is "not found".
 */
import type { TransactionOrKnex } from 'objection';
import { NotFoundError } from '../../common/errors';
import { Invoice } from '../../db/models';

export interface BillingActor {
  companyId: string;
}

export function invoicesOf(actor: BillingActor, db: TransactionOrKnex) {
  return Invoice.scoped(actor.companyId, db);
}

export async function invoiceOf(actor: BillingActor, db: TransactionOrKnex, id: string): Promise<Invoice> {
  const invoice = await invoicesOf(actor, db).findById(id);
  if (!invoice) throw new NotFoundError('invoice not found');
  return invoice;
}
