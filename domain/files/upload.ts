/**
 * The upload command: a new file (version 1) or a new version of a file, all or nothing. The bytes go to
 * MinIO first, under a key naming the new version id; then ONE transaction counts the quota, writes the
 * file/dataset/version rows, the `file.uploaded` event and the audit record. If the transaction fails, the
 * object is removed; if MinIO fails, no row was written. After commit the report workflow of the version
 * starts. No HTTP here: the multipart adapter (api/routes/files/upload.ts) streams a form's file part
 * through `uploadInspector` and `storeUpload`; an adapter that holds the content calls `uploadFile`.
 */
import { Readable } from 'node:stream';
import type { Knex } from 'knex';
import { AppError, BadRequestError, DomainError } from '../../common/errors';
import { uuidv7 } from '../../common/ids';
import { streamToObject } from '../../common/objectUpload';
import { Company, Dataset, File, FileVersion, type Visibility } from '../../db/models';
import { transact } from '../../db/transaction';
import { withCompany } from '../../db/unitOfWork';
import { PlanLimitError, requirePlan } from '../plans/errors';
import { planLimits, type PlanName } from '../plans/plans';
import { checkQuotaEarly, countUpload } from '../plans/quota';
import { visibleFile, type Db, type FileActor } from './access';
import { auditFile, type FilesDeps } from './files';
import { contentTypeOf } from './formats';
import { UploadInspector } from './inspect';
import { startReport } from './reportStarts';
import { startAutomaticComparison } from '../comparisons/commands';
import { inspectStoredXlsx, xlsxLimits } from './xlsx';

export interface UploadResult {
  file: File;
  version: FileVersion;
}

/** Where an upload goes, decided before a byte of it is read (openUpload). */
export interface UploadSlot {
  actor: FileActor;
  /** the plan as the request read it (the early refusals); the upload's transaction reads it again */
  plan: PlanName;
  /** the file a new version goes to; absent for a new file */
  existing?: File;
  fileId: string;
  versionId: string;
  objectKey: string;
  startedAt: number;
}

/** What the adapter read: the file's name, its visibility (a new file only) and its stored bytes. */
export interface ReceivedUpload {
  fileName: string;
  visibility?: Visibility;
  /** the inspector the content went through (format, dialect, rows, sha256) */
  inspector: UploadInspector;
  size: number;
  /** the adapter, when not the HTTP upload: written into the audit entry (`details.via`) */
  via?: UploadChannel;
}

/** Adapters other than the multipart upload that upload files, as the audit entry names them. */
export type UploadChannel = 'ai-agent';

/**
 * The file a new version goes to: 404 unless the actor sees it. Checked first: a file the caller may not see
 * is "not found" whatever else is wrong with the request.
 */
export function uploadTarget(actor: FileActor, db: Db, fileId: string): Promise<File> {
  return visibleFile(actor, db, fileId);
}

function checkVersionLimit(plan: PlanName, file: File): void {
  const max = planLimits(plan).versionsPerFile;
  if (max !== null && file.currentVersion >= max) {
    throw new PlanLimitError(
      `the file has ${file.currentVersion} versions: the ${plan} plan keeps at most ${max} versions of a file`,
    );
  }
}

/**
 * The refusals that need no byte of the content — no plan (PlanRequiredError), the plan's versions per file
 * (PlanLimitError), the quota already used up (QuotaExceededError; the transaction decides) — then the new
 * version's ids and object key.
 */
export async function openUpload(
  deps: Pick<FilesDeps, 'knex' | 'storage'>,
  actor: FileActor,
  existing?: File,
): Promise<UploadSlot> {
  const plan = requirePlan(actor.companyPlan);
  if (existing) checkVersionLimit(plan, existing);
  await checkQuotaEarly(deps.knex, actor.companyId, plan);
  const fileId = existing?.id ?? uuidv7();
  const versionId = uuidv7();
  return {
    actor,
    plan,
    existing,
    fileId,
    versionId,
    objectKey: deps.storage.key('files', actor.companyId, fileId, versionId),
    startedAt: Date.now(),
  };
}

/** The transform the content streams through: size limit, format, dialect, row and column limits, sha256. */
export function uploadInspector(deps: Pick<FilesDeps, 'config'>, fileName: string): UploadInspector {
  return new UploadInspector(
    fileName,
    { maxRows: deps.config.files.maxRows, maxColumns: deps.config.files.maxColumns },
    undefined,
    deps.config.files.xlsxMaxEntries,
  );
}

/**
 * Streams the inspected content into the slot's object (multipart parts while reading). Rejects with the
 * inspector's or MinIO's first problem, after which no object and no parts remain.
 */
export function storeUpload(
  deps: Pick<FilesDeps, 'storage' | 'config'>,
  slot: UploadSlot,
  inspector: UploadInspector,
): Promise<{ size: number }> {
  const { storage, config } = deps;
  // the content type is known once the first 64 KB are seen; the uploader reads those first
  return streamToObject(storage.client, storage.bucket, slot.objectKey, inspector, {
    partBytes: config.files.uploadPartBytes,
    maxInFlight: config.files.uploadPartsInFlight,
    // the charset as far as the inspector knows when the object is created (the download link gives the
    // version's, decided on every byte)
    contentType: () => contentTypeOf(inspector.sniffed?.format ?? 'csv', inspector.encoding),
  });
}

/** Removes the object of an upload that will not commit (logged when it fails: the sweep finds it later). */
export async function discardUpload(
  deps: Pick<FilesDeps, 'storage' | 'log'>,
  slot: UploadSlot,
): Promise<void> {
  const { storage } = deps;
  try {
    await storage.client.removeObject(storage.bucket, slot.objectKey);
  } catch (err) {
    // the key names the version id that never committed: the orphan sweep finds it later
    deps.log.error({ err, objectKey: slot.objectKey }, 'could not remove the object of a failed upload');
  }
}

async function writeRows(
  deps: Pick<FilesDeps, 'config' | 'temporal' | 'log'>,
  knex: Knex,
  slot: UploadSlot,
  received: ReceivedUpload,
  facts: { rowCount: number | null; columnCount: number | null },
  correlationId: string | undefined,
): Promise<UploadResult> {
  const { actor, existing } = slot;
  const sniffed = received.inspector.sniffed!;
  return transact(
    knex,
    async (uow) => {
      const { trx, emit, afterCommit } = uow;
      // the plan the upload is saved under, read again: the request's (slot.plan) is as old as the request,
      // and a plan changed while the body streamed applies to this upload. KEY SHARE conflicts with the plan
      // change's FOR UPDATE (domain/plans/subscriptions.ts): a change waits for this commit, or this read
      // waits for the change and sees the new plan
      const company = await Company.scoped(actor.companyId, trx).select('plan').forKeyShare().first();
      const plan = requirePlan(company?.plan ?? null);
      let file: File;
      let version: number;
      if (existing) {
        const locked = await visibleFile(actor, trx, existing.id, { forUpdate: true });
        checkVersionLimit(plan, locked);
        version = locked.currentVersion + 1;
        file = await locked.$query(trx).patchAndFetch({ currentVersion: version });
      } else {
        version = 1;
        file = await File.scoped(actor.companyId, trx).insertAndFetch({
          id: slot.fileId,
          datasetId: uuidv7(),
          originalName: received.fileName,
          uploadedByPersonId: actor.personId,
          uploadedByApiKeyId: actor.apiKeyId ?? null,
          visibility: received.visibility ?? 'private',
          currentVersion: 1,
        });
        await Dataset.scoped(actor.companyId, trx).insert({ id: file.datasetId, fileId: file.id });
      }
      const quota = await countUpload(trx, { companyId: actor.companyId, plan }, emit);
      const row = await FileVersion.scoped(actor.companyId, trx).insertAndFetch({
        id: slot.versionId,
        fileId: file.id,
        datasetId: file.datasetId,
        version,
        originalName: received.fileName,
        format: sniffed.format,
        contentType: contentTypeOf(sniffed.format, received.inspector.encoding),
        delimiter: sniffed.delimiter ?? null,
        lineEndings: sniffed.lineEndings ?? null,
        encoding: received.inspector.encoding,
        linesBeforeHeader: sniffed.format === 'xlsx' ? null : (sniffed.linesBeforeHeader ?? 0),
        headerRow: sniffed.format === 'xlsx' ? null : (sniffed.headerRow ?? 1),
        sizeBytes: received.size,
        objectKey: slot.objectKey,
        rowCount: facts.rowCount,
        columnCount: facts.columnCount,
        uploadedByPersonId: actor.personId,
        uploadedByApiKeyId: actor.apiKeyId ?? null,
      });
      // version n > 1 is compared with n − 1 (README "Comparisons")
      const previous =
        version > 1
          ? await FileVersion.scoped(actor.companyId, trx)
              .findOne({ fileId: file.id, version: version - 1 })
              .select('id')
          : undefined;
      await emit({
        companyId: actor.companyId,
        type: 'file.uploaded',
        data: { fileId: file.id, datasetId: file.datasetId, version },
      });
      await auditFile(uow, actor, existing ? 'file.version_uploaded' : 'file.uploaded', file.id, {
        version,
        sizeBytes: received.size,
        format: sniffed.format,
        filesUsed: quota.filesUsed,
        ...(received.via ? { via: received.via } : {}),
      });
      afterCommit(() => {
        // not awaited: the answer does not wait for Temporal; a start that fails is logged, the upload
        // stays saved and the hourly file sweep starts the report later (startMissingAnalyses)
        startReport(
          deps.temporal,
          { companyId: actor.companyId, fileId: file.id, fileVersionId: row.id, version },
          { taskQueue: deps.config.temporal.taskQueue, correlationId },
        ).catch((err: unknown) =>
          deps.log.error({ err, fileId: file.id, version }, 'report workflow did not start after upload'),
        );
      });
      if (previous) {
        afterCommit(() => {
          startAutomaticComparison(deps.temporal, deps.config.temporal.taskQueue, {
            companyId: actor.companyId,
            fileId: file.id,
            baseVersionId: previous.id,
            targetVersionId: row.id,
            baseVersion: version - 1,
            targetVersion: version,
            correlationId,
          }).catch((err: unknown) =>
            deps.log.error(
              { err, fileId: file.id, version },
              'comparison workflow did not start after upload',
            ),
          );
        });
      }
      return { file, version: row };
    },
    { correlationId },
  );
}

/**
 * Completes an upload whose bytes are stored: the XLSX checks that need the stored zip, then the one
 * transaction, then the report start. On any failure the object is removed and the error rethrown — unless
 * the transaction committed although its COMMIT failed (`savedAfterAll`).
 */
export async function completeUpload(
  deps: FilesDeps,
  slot: UploadSlot,
  received: ReceivedUpload,
  options: { correlationId?: string } = {},
): Promise<UploadResult> {
  const { storage, config } = deps;
  const timings: Record<string, number> = { receivedMs: Date.now() - slot.startedAt };
  try {
    const sniffed = received.inspector.sniffed!;
    let rowCount = received.inspector.dataRows;
    let columnCount = sniffed.columns ?? null;
    if (sniffed.format === 'xlsx') {
      const facts = await inspectStoredXlsx(
        storage.client,
        storage.bucket,
        slot.objectKey,
        received.size,
        xlsxLimits(config.files),
        received.inspector.zipWalk,
      );
      rowCount = facts.rows;
      columnCount = facts.columns;
      timings.inspectedMs = Date.now() - slot.startedAt;
    }
    const result = await writeRows(
      deps,
      deps.knex,
      slot,
      received,
      { rowCount, columnCount },
      options.correlationId,
    );
    timings.savedMs = Date.now() - slot.startedAt;
    deps.log.debug(
      { fileId: slot.fileId, versionId: slot.versionId, sizeBytes: received.size, ...timings },
      'upload saved',
    );
    return result;
  } catch (err) {
    const saved = await savedAfterAll(deps, slot, err);
    if (saved) return saved;
    await discardUpload(deps, slot);
    throw err;
  }
}

/**
 * The upload's rows when its transaction failed at COMMIT and committed all the same (the connection went
 * away before the answer came back): the object is then the saved version's and stays, and the upload
 * answers as saved (its report and comparison are started by the hourly file sweep). Undefined when the
 * version is not saved — a refusal, or a failure the lookup confirms —, after which the object is removed.
 * A lookup that fails too leaves the object to the orphan sweep rather than risk a version without it.
 */
async function savedAfterAll(
  deps: Pick<FilesDeps, 'knex' | 'log'>,
  slot: UploadSlot,
  err: unknown,
): Promise<UploadResult | undefined> {
  // a refusal is thrown inside the transaction, which then rolls back
  if (err instanceof AppError || err instanceof DomainError) return undefined;
  const { companyId } = slot.actor;
  let found: UploadResult | undefined;
  try {
    found = await withCompany(deps.knex, companyId, async (trx) => {
      const version = await FileVersion.scoped(companyId, trx).findById(slot.versionId);
      const file = version && (await File.scoped(companyId, trx).findById(slot.fileId));
      return version && file ? { file, version } : undefined;
    });
  } catch (lookupErr) {
    deps.log.error(
      { err: lookupErr, objectKey: slot.objectKey },
      'an upload failed and whether it was saved is unknown: its object is left to the orphan sweep',
    );
    throw err;
  }
  if (found) {
    deps.log.warn(
      { err, fileId: slot.fileId, versionId: slot.versionId },
      'the upload was saved although its commit failed; the file sweep starts its report',
    );
  }
  return found;
}

export interface UploadInput {
  /** absent: a new file (version 1); present: a new version of that file */
  fileId?: string;
  fileName: string;
  /** a new file only: private (default) or company */
  visibility?: Visibility;
  content: Buffer | Readable;
  correlationId?: string;
  /** the adapter uploading (audited as `details.via`) */
  via?: UploadChannel;
}

/**
 * The whole upload for an adapter that holds the content (an MCP tool, a script): the same checks, limits,
 * rows, events, audit and report start as the HTTP upload, without a request.
 */
export async function uploadFile(
  deps: FilesDeps,
  actor: FileActor,
  input: UploadInput,
): Promise<UploadResult> {
  if (input.fileId !== undefined && input.visibility !== undefined) {
    throw new BadRequestError('visibility is chosen with a new file, not with a new version');
  }
  const existing = input.fileId ? await uploadTarget(actor, deps.knex, input.fileId) : undefined;
  const slot = await openUpload(deps, actor, existing);
  const inspector = uploadInspector(deps, input.fileName);
  let size: number;
  try {
    const source = Buffer.isBuffer(input.content) ? Readable.from([input.content]) : input.content;
    source.on('error', (err: Error) => inspector.destroy(err));
    source.pipe(inspector);
    ({ size } = await storeUpload(deps, slot, inspector));
  } catch (err) {
    await discardUpload(deps, slot);
    throw err;
  }
  const received = {
    fileName: input.fileName,
    visibility: input.visibility,
    inspector,
    size,
    via: input.via,
  };
  return completeUpload(deps, slot, received, { correlationId: input.correlationId });
}
