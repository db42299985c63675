import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Knex } from 'knex';
import {
  BadRequestError,
  NotFoundError,
  ConflictError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '../../../common/errors';
import { CONTENT_TYPES, MAX_FILE_BYTES } from '../../../common/files/formats';
import { TOO_LARGE, UploadInspector } from '../../../common/files/inspect';
import { streamToObject } from '../../../common/files/objectUpload';
import { inspectStoredXlsx } from '../../../common/files/xlsx';
import { uuidv7 } from '../../../common/ids';
import { periodKey, planLimits, type PlanName } from '../../../common/plans';
import { auditActor, recordAudit } from '../../../db/audit';
import { Dataset, File, FileVersion, type Visibility } from '../../../db/models';
import { countUpload, filesUsed, quotaExceeded } from '../../../db/quota';
import { transact } from '../../../db/transaction';
import { reportWorkflow } from '../../../workflows/report';
import { workflowIdentity } from '../../../workflows/shared';
import type { AppContext } from '../../context';
import { principalOf } from '../../middlewares/authenticate';
import { FormFingerprint, UPLOAD_FORM_LIMITS } from '../../middlewares/formFingerprint';
import { requirePlan } from '../../middlewares/plan';
import { visibleFiles } from './access';

/** Room for the multipart envelope (boundaries, part headers, small fields) around a 25 MB file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const VISIBILITIES: readonly Visibility[] = ['private', 'company'];

interface Received {
  fileName: string;
  visibility?: Visibility;
  inspector: UploadInspector;
  size: number;
  /** the form's fingerprint (fields, file name, content sha256), for Idempotency-Key */
  fingerprint: string;
}

/**
 * Reads the multipart form: exactly one part `file` (streamed through the inspector into MinIO under
 * `objectKey`) and, for a new file, an optional field `visibility`. Resolves once the form is read and
 * the object is stored; rejects with the first problem, after which the object does not exist.
 */
function receive(ctx: AppContext, objectKey: string, allowVisibility: boolean): Promise<Received> {
  const req: IncomingMessage = ctx.req;
  const { storage, config } = ctx.deps;
  return new Promise<Received>((resolve, reject) => {
    let settled = false;
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        // browsers and fetch send file names as UTF-8
        defParamCharset: 'utf8',
        limits: UPLOAD_FORM_LIMITS,
      });
    } catch {
      reject(new BadRequestError('the multipart body has no boundary'));
      return;
    }
    const problems: string[] = [];
    const form = new FormFingerprint();
    let visibility: Visibility | undefined;
    let upload: Promise<Omit<Received, 'fingerprint'>> | undefined;
    let inspecting: UploadInspector | undefined;

    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      // stop reading: the rest of the request is discarded and the connection closed after the answer
      req.unpipe(bb);
      req.resume();
      ctx.set('Connection', 'close');
      // end the file stream with the error, so an upload in flight stops reading and aborts its multipart
      // upload; answer once it has
      inspecting?.destroy(err);
      void (upload ?? Promise.resolve()).catch(() => undefined).finally(() => reject(err));
    };

    bb.on('file', (name: string, stream: Readable, info: busboy.FileInfo) => {
      if (name !== 'file') {
        stream.resume();
        problems.push(`form: unknown part "${name}" (the file goes in the part "file")`);
        return;
      }
      const inspector = new UploadInspector(info.filename || 'upload', {
        maxRows: config.files.maxRows,
        maxColumns: config.files.maxColumns,
      });
      inspecting = inspector;
      stream.on('error', (err: Error) => inspector.destroy(err));
      stream.on('limit', () => inspector.destroy(new PayloadTooLargeError(TOO_LARGE)));
      stream.pipe(inspector);
      upload = (async () => {
        try {
          // the content type is known once the first 64 KB are seen; the uploader reads those first
          const { size } = await streamToObject(storage.client, storage.bucket, objectKey, inspector, {
            partBytes: config.files.uploadPartBytes,
            maxInFlight: config.files.uploadPartsInFlight,
            contentType: () => CONTENT_TYPES[inspector.sniffed?.format ?? 'csv'],
          });
          form.file(name, info.filename, inspector.contentSha256);
          return { fileName: info.filename || 'upload', inspector, size };
        } catch (err) {
          stream.unpipe(inspector);
          stream.resume();
          throw err;
        }
      })();
      upload.catch((err: unknown) => fail(err instanceof Error ? err : new Error(String(err))));
    });
    bb.on('field', (name: string, value: string, info: busboy.FieldInfo) => {
      form.field(name, value);
      if (name === 'visibility' && allowVisibility) {
        if (info.valueTruncated || !VISIBILITIES.includes(value as Visibility)) {
          problems.push('form.visibility must be one of private, company');
        } else visibility = value as Visibility;
      } else {
        problems.push(`form: unknown field "${name}"`);
      }
    });
    bb.on('filesLimit', () => problems.push('form: send exactly one file, in the part "file"'));
    bb.on('fieldsLimit', () => problems.push('form: too many fields'));
    bb.on('partsLimit', () => problems.push('form: too many parts'));
    bb.on('error', () => fail(new BadRequestError('the multipart body is malformed')));
    bb.on('close', () => {
      if (settled) return;
      if (!upload) {
        const all = [...problems, 'form.file is required'];
        fail(new BadRequestError(all.length === 1 ? all[0] : all));
        return;
      }
      upload.then(
        (received) => {
          if (settled) return;
          if (problems.length > 0) {
            fail(new BadRequestError(problems.length === 1 ? problems[0] : problems));
            return;
          }
          settled = true;
          resolve({ ...received, visibility, fingerprint: form.digest() });
        },
        () => undefined, // handled by fail()
      );
    });
    // the client went away mid-body
    req.on('close', () => {
      if (!req.complete) fail(new BadRequestError('the upload was interrupted'));
    });
    req.pipe(bb);
  });
}

async function removeObject(ctx: AppContext, key: string): Promise<void> {
  const { storage } = ctx.deps;
  try {
    await storage.client.removeObject(storage.bucket, key);
  } catch (err) {
    // the key names the version id that never committed: the orphan sweep finds it later
    ctx.state.log.error({ err, objectKey: key }, 'could not remove the object of a failed upload');
  }
}

/** Refusals that need no byte of the body: wrong content type, Content-Length over 25 MB. */
function checkRequest(ctx: AppContext): void {
  if (!ctx.is('multipart/form-data')) {
    throw new UnsupportedMediaTypeError(
      'unsupported content type: send multipart/form-data with the file in the part "file"',
    );
  }
  const length = Number(ctx.get('Content-Length'));
  if (Number.isFinite(length) && length > MAX_FILE_BYTES + MULTIPART_OVERHEAD_BYTES) {
    ctx.set('Connection', 'close');
    throw new PayloadTooLargeError(TOO_LARGE);
  }
}

/** Quick refusal before reading the body when the quota is already used up (the transaction decides). */
async function checkQuotaEarly(knex: Knex, companyId: string, plan: PlanName): Promise<void> {
  const limits = planLimits(plan);
  if (limits.billsExcessFiles) return;
  const key = periodKey();
  if ((await filesUsed(knex, companyId, key)) >= limits.filesPerPeriod) throw quotaExceeded(plan, key);
}

function checkVersionLimit(plan: PlanName, file: File): void {
  const max = planLimits(plan).versionsPerFile;
  if (max !== null && file.currentVersion >= max) {
    throw new ConflictError(
      `the file has ${file.currentVersion} versions: the ${plan} plan keeps at most ${max} versions of a file`,
    );
  }
}

export interface UploadResult {
  file: File;
  version: FileVersion;
}

/**
 * An upload, all or nothing: the bytes stream into MinIO under a key naming the new version id; then ONE
 * transaction counts the quota, writes the file/dataset/version rows, the `file.uploaded` event and the
 * audit record. If the transaction fails, the object is removed; if MinIO fails, no row was written.
 * After commit the report workflow of the version starts.
 * `fileId` absent: a new file (version 1); present: a new version of that file.
 */
export async function upload(ctx: AppContext, fileId?: string): Promise<UploadResult> {
  const auth = principalOf(ctx);
  const { knex, storage, config, temporal } = ctx.deps;
  // a file the caller may not see is "not found" whatever else is wrong with the request
  const existing = fileId ? await visibleFiles(auth, knex).findById(fileId) : undefined;
  if (fileId && !existing) throw new NotFoundError('file not found');
  checkRequest(ctx);
  const plan = requirePlan(auth);
  if (existing) checkVersionLimit(plan, existing);
  await checkQuotaEarly(knex, auth.companyId, plan);

  const newFileId = existing?.id ?? uuidv7();
  const versionId = uuidv7();
  const objectKey = storage.key('files', auth.companyId, newFileId, versionId);
  const started = Date.now();
  const timings: Record<string, number> = {};
  try {
    const received = await receive(ctx, objectKey, !existing);
    ctx.state.bodyFingerprint = received.fingerprint;
    timings.receivedMs = Date.now() - started;
    const sniffed = received.inspector.sniffed!;
    let rowCount = received.inspector.dataRows;
    let columnCount = sniffed.columns ?? null;
    if (sniffed.format === 'xlsx') {
      const facts = await inspectStoredXlsx(storage.client, storage.bucket, objectKey, received.size, {
        maxUnpackedBytes: config.files.xlsxMaxUnpackedBytes,
        maxEntries: config.files.xlsxMaxEntries,
        maxCompressionRatio: config.files.xlsxMaxCompressionRatio,
        maxSharedStringsBytes: config.files.xlsxMaxSharedStringsBytes,
        maxSharedStrings: config.files.xlsxMaxSharedStrings,
        maxRows: config.files.maxRows,
        maxColumns: config.files.maxColumns,
      });
      rowCount = facts.rows;
      columnCount = facts.columns;
      timings.inspectedMs = Date.now() - started;
    }
    const result = await transact(
      knex,
      async ({ trx, emit, afterCommit }) => {
        let file: File;
        let version: number;
        if (existing) {
          const locked = await visibleFiles(auth, trx).findById(existing.id).forUpdate();
          if (!locked) throw new NotFoundError('file not found');
          checkVersionLimit(plan, locked);
          version = locked.currentVersion + 1;
          file = await locked.$query(trx).patchAndFetch({ currentVersion: version });
        } else {
          version = 1;
          file = await File.scoped(auth.companyId, trx).insertAndFetch({
            id: newFileId,
            datasetId: uuidv7(),
            originalName: received.fileName,
            uploadedByPersonId: auth.personId,
            uploadedByApiKeyId: auth.apiKeyId ?? null,
            visibility: received.visibility ?? 'private',
            currentVersion: 1,
          });
          await Dataset.scoped(auth.companyId, trx).insert({ id: file.datasetId, fileId: file.id });
        }
        const quota = await countUpload(trx, { companyId: auth.companyId, plan }, emit);
        const row = await FileVersion.scoped(auth.companyId, trx).insertAndFetch({
          id: versionId,
          fileId: file.id,
          datasetId: file.datasetId,
          version,
          originalName: received.fileName,
          format: sniffed.format,
          contentType: CONTENT_TYPES[sniffed.format],
          delimiter: sniffed.delimiter ?? null,
          lineEndings: sniffed.lineEndings ?? null,
          sizeBytes: received.size,
          objectKey,
          rowCount,
          columnCount,
          uploadedByPersonId: auth.personId,
          uploadedByApiKeyId: auth.apiKeyId ?? null,
        });
        await emit({
          companyId: auth.companyId,
          type: 'file.uploaded',
          data: { fileId: file.id, datasetId: file.datasetId, version },
        });
        await recordAudit(trx, {
          ...auditActor(auth, ctx.state.correlationId),
          action: existing ? 'file.version_uploaded' : 'file.uploaded',
          resourceType: 'file',
          resourceId: file.id,
          details: { version, sizeBytes: received.size, format: sniffed.format, filesUsed: quota.filesUsed },
        });
        afterCommit(() => {
          // not awaited: the answer does not wait for Temporal; a start that fails is logged, the upload
          // stays saved and the hourly file sweep starts the report later (startMissingReports)
          temporal.workflow
            .start(reportWorkflow, {
              ...workflowIdentity({
                kind: 'report',
                parts: [file.id, `v${version}`],
                companyId: auth.companyId,
                taskQueue: config.temporal.taskQueue,
                correlationId: ctx.state.correlationId,
              }),
              args: [{ companyId: auth.companyId, fileId: file.id, fileVersionId: row.id, version }],
            })
            .catch((err: unknown) =>
              ctx.state.log.error(
                { err, fileId: file.id, version },
                'report workflow did not start after upload',
              ),
            );
        });
        timings.committingMs = Date.now() - started;
        return { file, version: row };
      },
      { correlationId: ctx.state.correlationId },
    );
    timings.savedMs = Date.now() - started;
    ctx.state.log.debug(
      { fileId: newFileId, versionId, sizeBytes: received.size, ...timings },
      'upload saved',
    );
    return result;
  } catch (err) {
    await removeObject(ctx, objectKey);
    throw err;
  }
}
