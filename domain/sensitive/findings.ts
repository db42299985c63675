/**
 * Sensitive-data findings of a version and the `file.sensitive_data_found` event. The event goes out only
 * for a file the whole company can see, at most once per version: when its report finds something while the
 * file is company-visible, or when a private file with findings is later made company-visible. Both paths
 * hold the file row lock (the report save shares it, the visibility change takes it for update), and
 * `notified_at` on the finding is the proof the event was written.
 */
import { randomUUID } from 'node:crypto';
import type { UnitOfWork } from '../../db/transaction';
import { SensitiveFinding } from '../../db/models';
import type { FlaggedColumn } from './step';
import { notify as notifyPeople } from '../notifications/notify';

export interface FindingColumn {
  /** the column's name; `sheet` names its worksheet */
  name: string;
  sheet: string;
  kinds: string[];
}

export function findingColumns(flagged: readonly FlaggedColumn[]): FindingColumn[] {
  return flagged.map((c) => ({ name: c.column, sheet: c.sheet, kinds: c.kinds.map((k) => k.kind) }));
}

interface VersionRef {
  companyId: string;
  fileId: string;
  datasetId: string;
  fileVersionId: string;
  version: number;
}

async function notify(uow: UnitOfWork, ref: VersionRef, finding: SensitiveFinding): Promise<void> {
  await uow.emit({
    companyId: ref.companyId,
    type: 'file.sensitive_data_found',
    data: { fileId: ref.fileId, datasetId: ref.datasetId, version: ref.version, columns: finding.columns },
  });
  await SensitiveFinding.scoped(ref.companyId, uow.trx)
    .patch({ notifiedAt: new Date() })
    .where('sensitiveFindings.id', finding.id);
}

/** Saves the findings of a build (replacing a previous build's) and notifies when the file is company-visible. */
export async function recordFindings(
  uow: UnitOfWork,
  ref: VersionRef & { visibility: string; uploadedByPersonId: string | null },
  columns: FindingColumn[],
): Promise<void> {
  const query = () => SensitiveFinding.scoped(ref.companyId, uow.trx);
  let finding = await query().findOne({ 'sensitiveFindings.fileVersionId': ref.fileVersionId }).forUpdate();
  if (finding) {
    finding = await finding.$query(uow.trx).patchAndFetch({ columns });
  } else if (columns.length > 0) {
    finding = await query().insertAndFetch({
      id: randomUUID(),
      fileVersionId: ref.fileVersionId,
      fileId: ref.fileId,
      version: ref.version,
      columns,
    });
  }
  if (finding && columns.length > 0) {
    // the uploader and the admins see the file whatever its visibility: they hear of it once per version
    await notifyPeople(uow, {
      companyId: ref.companyId,
      kind: 'sensitive_data.found',
      to: { people: [ref.uploadedByPersonId], admins: true },
      resource: { type: 'file', id: ref.fileId },
      data: { fileId: ref.fileId, version: ref.version, columnCount: columns.length },
      cause: `sensitive:${ref.fileVersionId}`,
    });
  }
  if (finding && columns.length > 0 && ref.visibility === 'company' && !finding.notifiedAt) {
    await notify(uow, ref, finding);
  }
}

/**
 * The file was just made company-visible (its row is locked): every version whose report found something
 * and was not announced yet is announced now.
 */
export async function announceFindingsOfFile(
  uow: UnitOfWork,
  file: { id: string; companyId: string; datasetId: string },
): Promise<void> {
  const pending = await SensitiveFinding.scoped(file.companyId, uow.trx)
    .where('sensitiveFindings.fileId', file.id)
    .whereNull('sensitiveFindings.notifiedAt')
    .whereRaw('jsonb_array_length(sensitive_findings.columns) > 0')
    .orderBy('sensitiveFindings.version')
    .forUpdate();
  for (const finding of pending) {
    await notify(
      uow,
      {
        companyId: file.companyId,
        fileId: file.id,
        datasetId: file.datasetId,
        fileVersionId: finding.fileVersionId,
        version: finding.version,
      },
      finding,
    );
  }
}
