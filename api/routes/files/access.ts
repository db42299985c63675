import type { TransactionOrKnex } from 'objection';
import { ForbiddenError, NotFoundError } from '../../../common/errors';
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

/**
 * The file to change or delete, locked for the transaction: 404 when the caller does not see it, 403 when
 * the caller sees it but is neither its uploader nor an admin.
 */
export async function fileToManage(auth: Principal, trx: TransactionOrKnex, id: string): Promise<File> {
  const file = await visibleFiles(auth, trx).findById(id).forUpdate();
  if (!file) throw new NotFoundError('file not found');
  if (auth.role !== 'admin' && file.uploadedByPersonId !== auth.personId) {
    throw new ForbiddenError('only the person who uploaded the file or an admin may change or delete it');
  }
  return file;
}
