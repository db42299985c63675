/**
 * Who may read and change quality rules. Reading: anyone of the company (files:read). Writing: admins
 * (rules:write); the route table refuses others first, this is the domain's own guard for other adapters.
 * Rows: a rule of another company does not exist for the caller (404, never 403).
 */
import type { TransactionOrKnex } from 'objection';
import { ForbiddenError, NotFoundError } from '../../common/errors';
import { Rule } from '../../db/models';

/** The acting principal as the rules domain needs it (the API's Principal fits). */
export interface RulesPrincipal {
  companyId: string;
  personId: string;
  role: 'admin' | 'employee';
  apiKeyId?: string | null;
}

export function assertMayWriteRules(principal: RulesPrincipal): void {
  if (principal.role !== 'admin') throw new ForbiddenError('only admins may create, change or delete rules');
}

/** The company's rules: the one query every read goes through. */
export function visibleRules(principal: RulesPrincipal, trx?: TransactionOrKnex) {
  return Rule.scoped(principal.companyId, trx);
}

export async function findRule(
  principal: RulesPrincipal,
  trx: TransactionOrKnex,
  id: string,
  forUpdate = false,
): Promise<Rule> {
  const query = visibleRules(principal, trx).findById(id);
  const rule = await (forUpdate ? query.forUpdate() : query);
  if (!rule) throw new NotFoundError('rule not found');
  return rule;
}
