/** Batched reads of sensitive-data findings (GraphQL's DataLoaders), through the files' visibility rule. */
import { SensitiveFinding } from '../../db/models';
import { visibleFiles, type Db, type FileActor } from '../files/access';

/** The findings of `versionIds` whose file the actor may see (names and kinds of columns, never values). */
export function findingsOfVersions(
  actor: FileActor,
  db: Db,
  versionIds: readonly string[],
): Promise<SensitiveFinding[]> {
  return SensitiveFinding.scoped(actor.companyId, db)
    .whereIn('sensitiveFindings.fileVersionId', [...versionIds])
    .whereExists(
      visibleFiles(actor, db).select(1).whereColumn('files.id', 'sensitiveFindings.fileId'),
    ) as unknown as Promise<SensitiveFinding[]>;
}
