import type { TransactionOrKnex } from 'objection';
import { ForbiddenError, PaymentRequiredError, UnauthorizedError } from '../../../common/errors';
import type { PlanName } from '../../../common/plans';
import { quotaMessage } from '../../../db/quota';
import { File } from '../../../db/models';
import type { AppContext, Principal } from '../../context';
import { NO_PLAN_MESSAGE } from '../../middlewares/plan';

export function principal(ctx: AppContext): Principal {
  const auth = ctx.state.auth;
  if (!auth) throw new UnauthorizedError();
  return auth;
}

/**
 * Who sees a file — the one rule every files query goes through (lists, versions, previews, download
 * links, reports): files of the caller's company that are visible to the whole company, that the caller
 * uploaded, or any file of the company when the caller is an admin. An API key sees what its owner sees.
 * Anything else is "not found".
 */
export function visibleFiles(auth: Principal, trx?: TransactionOrKnex) {
  const query = File.scoped(auth.companyId, trx);
  if (auth.role !== 'admin') {
    void query.where((q) =>
      q.where('files.visibility', 'company').orWhere('files.uploadedByPersonId', auth.personId),
    );
  }
  return query;
}

/** Changing who sees a file or deleting it: its uploader or an admin (others who see it get 403). */
export function assertMayManage(auth: Principal, file: File): void {
  if (auth.role !== 'admin' && file.uploadedByPersonId !== auth.personId) {
    throw new ForbiddenError('only the person who uploaded the file or an admin may change or delete it');
  }
}

/**
 * Uploads need a plan (the shared guard's message; checked in the handler so that a file the caller may not
 * see is still "not found" first).
 */
export function requirePlan(auth: Principal): PlanName {
  if (!auth.companyPlan) throw new PaymentRequiredError(NO_PLAN_MESSAGE);
  return auth.companyPlan;
}

export function quotaExceeded(plan: PlanName, key: string): PaymentRequiredError {
  return new PaymentRequiredError(quotaMessage(plan, key));
}
