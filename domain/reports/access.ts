import type { TransactionOrKnex } from 'objection';
import { NotFoundError } from '../../common/errors';
import { FileVersion } from '../../db/models';
// the one visibility rule of files (who sees which file) — reused, never copied
import { visibleFiles } from '../../api/routes/files/access';
import type { Principal } from '../../api/context';

export type Principal_ = Principal;

/**
 * A version of a file the principal may see (`version` 'latest': the file's newest version), or 404 —
 * the same answer for another company's file, a private file of someone else and a missing one.
 */
export async function visibleVersion(
  auth: Principal,
  trx: TransactionOrKnex,
  fileId: string,
  version: number | 'latest',
): Promise<FileVersion> {
  const query = FileVersion.scoped(auth.companyId, trx)
    .where('fileVersions.fileId', fileId)
    .whereExists(visibleFiles(auth, trx).select(1).whereColumn('files.id', 'fileVersions.fileId'));
  const row =
    version === 'latest'
      ? await query.orderBy('fileVersions.version', 'desc').first()
      : await query.where('fileVersions.version', version).first();
  if (!row) throw new NotFoundError(version === 'latest' ? 'file not found' : 'file version not found');
  return row;
}
