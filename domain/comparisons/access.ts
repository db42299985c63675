import type { TransactionOrKnex } from 'objection';
import type { FileActor } from '../files/access';
import { NotFoundError } from '../../common/errors';
import { Comparison } from '../../db/models';
// the one visibility rule of files (who sees which file), through the reports' version lookup — reused, not copied
import { visibleVersion } from '../reports/access';

export { visibleVersion };

/**
 * A comparison the principal may see: of the principal's company, and of a file the principal may see
 * (both versions are of that file); 404 otherwise — the same answer for another company's comparison.
 */
export async function visibleComparison(
  auth: FileActor,
  trx: TransactionOrKnex,
  id: string,
): Promise<Comparison> {
  const row = await Comparison.scoped(auth.companyId, trx).findById(id);
  if (!row) throw new NotFoundError('comparison not found');
  try {
    await visibleVersion(auth, trx, row.fileId, row.targetVersion);
  } catch {
    throw new NotFoundError('comparison not found');
  }
  return row;
}
