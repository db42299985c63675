/**
 * Files commands and queries: read files and versions, preview a version, sign its download link, change a
 * file's visibility, delete a file. Each takes its dependencies, the acting person (FileActor) and, for a
 * change, the unit of work it runs in (db/transaction.ts `transact`); none sees an HTTP request.
 * Uploads are in upload.ts.
 */
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { Storage } from '../../common/storage';
import { auditActor, changeWithAudit, recordAudit } from '../audit/record';
import { File, FileVersion, type Visibility } from '../../db/models';
import { BadRequestError } from '../../common/errors';
import type { UnitOfWork } from '../../db/transaction';
import { fileToManage, visibleFile, visibleFiles, visibleVersion, type Db, type FileActor } from './access';
import { downloadLink } from './downloads';
import type { FileFormat } from './formats';
import { previewStream, type Preview } from './preview';
import { previewStoredXlsx } from './xlsxPreview';
import { cancelBuilds, reportLeftovers } from '../reports/queries';
import { comparisonLeftovers } from '../comparisons/queries';
import { announceFindingsOfFile } from '../sensitive/findings';
import { forgetFileInRules } from '../rules/queries';

/** Everything the files capability may need; each command names the part it uses. */
export interface FilesDeps {
  knex: Knex;
  storage: Storage;
  config: Config;
  temporal: Client;
  /** the caller's logger (a request's carries its correlation id) */
  log: Logger;
}

/** An audit entry about a file, written in the unit of work's transaction (it commits with the change). */
export function auditFile(
  uow: Pick<UnitOfWork, 'trx' | 'correlationId'>,
  actor: FileActor,
  action: string,
  fileId: string,
  details: Record<string, unknown>,
): Promise<void> {
  return recordAudit(uow.trx, {
    ...auditActor(actor, uow.correlationId),
    action,
    resourceType: 'file',
    resourceId: fileId,
    details,
  });
}

/** The files the actor may see (a query, to be ordered and paged by the caller). */
export function listFiles(actor: FileActor, db: Db) {
  return visibleFiles(actor, db);
}

/** One file the actor may see (404 otherwise). */
export function getFile(actor: FileActor, db: Db, id: string): Promise<File> {
  return visibleFile(actor, db, id);
}

/**
 * The versions of a file the actor may see, newest first (`versions` is a query, to be paged by the caller;
 * wrapped, since awaiting a query runs it); 404 otherwise.
 */
export async function listVersions(actor: FileActor, db: Db, fileId: string) {
  const file = await visibleFile(actor, db, fileId);
  const versions = FileVersion.scoped(actor.companyId, db)
    .where({ fileId: file.id })
    .orderBy('version', 'desc');
  return { file, versions };
}

/** One version of a file the actor may see (404 otherwise). */
export function getVersion(actor: FileActor, db: Db, fileId: string, version: number): Promise<FileVersion> {
  return visibleVersion(actor, db, fileId, version);
}

export interface VersionPreview extends Preview {
  fileId: string;
  version: number;
  format: FileFormat;
  /** XLSX: the sheet shown (null when the workbook lists none); CSV/TSV: null */
  sheet: string | null;
  /** XLSX: the workbook's sheet names in order; CSV/TSV: null */
  sheets: string[] | null;
}

/**
 * The first `rows` rows and the columns of a version (of an XLSX, the worksheet named `sheet`, else the first):
 * at most 100 columns, cells cut at 1000 characters. `sheet` on a CSV/TSV, or a name the workbook does not
 * list, is 400.
 */
export async function previewVersion(
  deps: Pick<FilesDeps, 'knex' | 'storage' | 'config'>,
  actor: FileActor,
  fileId: string,
  versionNumber: number,
  rows: number,
  sheet?: string,
): Promise<VersionPreview> {
  const version = await visibleVersion(actor, deps.knex, fileId, versionNumber);
  const { storage, config } = deps;
  const options = { rows, maxColumns: 100, maxCellChars: 1000 };
  if (sheet !== undefined && version.format !== 'xlsx') {
    throw new BadRequestError(`query.sheet: a ${version.format.toUpperCase()} version has no sheets`);
  }
  const preview =
    version.format === 'xlsx'
      ? await previewStoredXlsx(
          storage.client,
          storage.bucket,
          version.objectKey,
          Number(version.sizeBytes),
          { ...options, sheet },
          { maxEntries: config.files.xlsxMaxEntries },
        )
      : {
          ...(await previewStream(
            await storage.client.getObject(storage.bucket, version.objectKey),
            version.format,
            version.delimiter,
            options,
            version.encoding,
            version.linesBeforeHeader,
          )),
          sheet: null,
          sheets: null,
        };
  return { fileId: version.fileId, version: version.version, format: version.format, ...preview };
}

/** A signed link that downloads exactly this version, valid `expiresIn` seconds (default from config). */
export async function versionDownloadLink(
  deps: Pick<FilesDeps, 'knex' | 'config'>,
  actor: FileActor,
  fileId: string,
  versionNumber: number,
  expiresIn: number = deps.config.files.downloadLinkTtlSeconds,
): Promise<{ url: string; expiresAt: string; expiresIn: number }> {
  const version = await visibleVersion(actor, deps.knex, fileId, versionNumber);
  const link = await downloadLink(
    deps.config,
    version.objectKey,
    version.originalName,
    expiresIn,
    new Date(),
    version.contentType,
  );
  return { ...link, expiresIn };
}

/**
 * Changes who may see a file (its uploader or an admin; 403/404 otherwise), audited when it changes; made
 * company-visible, its versions' unannounced sensitive-data findings send file.sensitive_data_found.
 */
export async function changeVisibility(
  actor: FileActor,
  uow: UnitOfWork,
  fileId: string,
  visibility: Visibility,
): Promise<File> {
  const { trx } = uow;
  const current = await fileToManage(actor, trx, fileId);
  if (current.visibility === visibility) return current;
  // the change and its audit entry in one statement (no round trip for the entry)
  const [row] = await changeWithAudit<Record<string, unknown>>(
    trx,
    File.scoped(actor.companyId, trx)
      .toKnexQuery()
      .where('id', current.id)
      .update({ visibility, updatedAt: new Date() })
      .returning('*'),
    {
      ...auditActor(actor, uow.correlationId),
      action: 'file.visibility_changed',
      resourceType: 'file',
      resourceId: current.id,
      details: { from: current.visibility, to: visibility },
    },
  );
  const updated = File.fromDatabaseJson(row);
  // versions whose reports found sensitive data are announced now that everyone can see them
  if (visibility === 'company') await announceFindingsOfFile(uow, updated);
  return updated;
}

/**
 * Deletes a file with all its versions (its uploader or an admin; 403/404 otherwise), audited. Rows first
 * (versions, dataset and reports go by cascade), objects (versions' and report results') after commit, when
 * the file's report builds and comparisons in flight are cancelled too: a failure in between leaves an
 * unreferenced object for the sweep, never a row without its bytes.
 */
export async function deleteFile(
  deps: Pick<FilesDeps, 'storage' | 'log' | 'temporal'>,
  actor: FileActor,
  uow: UnitOfWork,
  fileId: string,
): Promise<void> {
  const { trx } = uow;
  const file = await fileToManage(actor, trx, fileId);
  const versions = await FileVersion.scoped(actor.companyId, trx)
    .where({ fileId: file.id })
    .select('objectKey');
  const reports = await reportLeftovers(trx, actor.companyId, file.id);
  const comparisons = await comparisonLeftovers(trx, actor.companyId, file.id);
  await file.$query(trx).delete();
  const rulesNarrowed = await forgetFileInRules(trx, actor.companyId, file.id);
  await auditFile(uow, actor, 'file.deleted', file.id, {
    originalName: file.originalName,
    versions: versions.length,
    ...(rulesNarrowed > 0 ? { rulesNarrowed } : {}),
  });
  // the versions' objects and the report results' objects
  const keys = [...versions.map((v) => v.objectKey), ...reports.objectKeys];
  uow.afterCommit(async () => {
    // report builds and comparisons in flight stop (their rows went with the file; they save nothing)
    await cancelBuilds(deps.temporal, [...reports.workflowIds, ...comparisons]);
    try {
      if (keys.length > 0) await deps.storage.client.removeObjects(deps.storage.bucket, keys);
    } catch (err) {
      deps.log.error({ err, fileId }, 'objects of a deleted file were not removed');
    }
  });
}
