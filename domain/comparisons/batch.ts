/**
 * Batched reads of comparisons (GraphQL's DataLoaders): a comparison is visible when its file is
 * (`visibleFiles`, the rule `visibleComparison` applies one at a time); anything else is left out.
 */
import { Comparison } from '../../db/models';
import { visibleFiles, type Db, type FileActor } from '../files/access';

export function visibleComparisonsByIds(
  actor: FileActor,
  db: Db,
  ids: readonly string[],
): Promise<Comparison[]> {
  return Comparison.scoped(actor.companyId, db)
    .whereIn('comparisons.id', [...ids])
    .whereExists(
      visibleFiles(actor, db).select(1).whereColumn('files.id', 'comparisons.fileId'),
    ) as unknown as Promise<Comparison[]>;
}

/** The automatic comparisons (version n against n − 1) of `versionIds`, as targets. */
export function automaticComparisonsOfVersions(
  actor: FileActor,
  db: Db,
  versionIds: readonly string[],
): Promise<Comparison[]> {
  return Comparison.scoped(actor.companyId, db)
    .whereIn('comparisons.targetVersionId', [...versionIds])
    .where('comparisons.automatic', true)
    .whereExists(
      visibleFiles(actor, db).select(1).whereColumn('files.id', 'comparisons.fileId'),
    ) as unknown as Promise<Comparison[]>;
}
