/**
 * Batched reads of reports (GraphQL's DataLoaders): the reports of many versions in one query, through the
 * files' visibility rule (`visibleFiles`), and their results (JSONB in the row, or the object in MinIO).
 */
import type { Storage } from '../../common/storage';
import { Report } from '../../db/models';
import { visibleFiles, type Db, type FileActor } from '../files/access';
import { readResult } from './result';
import type { ReportResult } from './present';

/** The report rows of `versionIds` whose file the actor may see (a version without a row is left out). */
export function reportsOfVersions(
  actor: FileActor,
  db: Db,
  versionIds: readonly string[],
): Promise<Report[]> {
  return Report.scoped(actor.companyId, db)
    .whereIn('reports.fileVersionId', [...versionIds])
    .whereExists(
      visibleFiles(actor, db).select(1).whereColumn('files.id', 'reports.fileId'),
    ) as unknown as Promise<Report[]>;
}

/** The result of a ready report already read through `reportsOfVersions` (null otherwise). */
export function reportResult(storage: Storage, report: Report): Promise<ReportResult | null> {
  return readResult(storage, report);
}
