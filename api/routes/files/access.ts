import type { TransactionOrKnex } from 'objection';
import { ForbiddenError } from '../../../common/errors';
import { File } from '../../../db/models';
import type { Principal } from '../../context';

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
