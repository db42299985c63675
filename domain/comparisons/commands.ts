import { auditActor, recordAudit } from '../audit/record';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { BadRequestError, UnprocessableError } from '../../common/errors';
import { visibleFiles, type FileActor } from '../files/access';
import { previewStream } from '../files/preview';
import { UnreadableFileError } from '../files/unreadable';
import { previewStoredXlsx } from '../files/xlsxPreview';
import type { Storage } from '../../common/storage';
import { Comparison, type FileVersion } from '../../db/models';
import type { UnitOfWork } from '../../db/transaction';
import { COMPARISON_WORKFLOW, comparisonStart } from '../../workflows/definitions/comparisons';
import { visibleVersion } from './access';
import { presentComparison, type ComparisonView } from './present';

export interface CommandDeps {
  storage: Storage;
  temporal: Client;
  taskQueue: string;
  maxColumns: number;
  /** the XLSX zip-entry limit (FILES_XLSX_MAX_ENTRIES) for reading a workbook's header */
  xlsxMaxEntries: number;
}

export interface ComparisonInput {
  base: { fileId: string; version: number };
  target: { fileId: string; version: number };
  keyColumns?: string[];
}

/**
 * The header names of a version (its first sheet), read from the stored object and stopped early. A header
 * that cannot be read is UnreadableFileError (422) naming the version (`role`), not a 500.
 */
async function headerOf(deps: CommandDeps, v: FileVersion, role: 'base' | 'target'): Promise<string[]> {
  try {
    return await readHeader(deps, v);
  } catch (err) {
    if (!(err instanceof UnreadableFileError)) throw err;
    throw new UnreadableFileError(`the ${role} version (${v.version}): ${err.message}`);
  }
}

async function readHeader(deps: CommandDeps, v: FileVersion): Promise<string[]> {
  const options = { rows: 0, maxColumns: deps.maxColumns, maxCellChars: 10_000 };
  if (v.format === 'xlsx') {
    const { client, bucket } = deps.storage;
    const preview = await previewStoredXlsx(client, bucket, v.objectKey, Number(v.sizeBytes), options, {
      maxEntries: deps.xlsxMaxEntries,
    });
    return preview.columns;
  }
  const stream = await deps.storage.client.getObject(deps.storage.bucket, v.objectKey);
  try {
    const preview = await previewStream(
      stream,
      v.format,
      v.delimiter,
      options,
      v.encoding,
      v.linesBeforeHeader,
    );
    return preview.columns;
  } finally {
    stream.destroy();
  }
}

/**
 * POST /comparisons: a requested comparison of two versions of one file the principal may see (404 when it
 * may not see either; 422 when they are versions of two files, or when key columns are named and the header
 * of either version cannot be read; 400 when a named key column is not in the header of either version — the
 * first sheet of a workbook; a later sheet without it fails the comparison with `missing_key_column`). Started after commit as `comparison:<fileId>:v<a>:v<b>:<id>`.
 */
export async function requestComparison(
  deps: CommandDeps,
  auth: FileActor,
  uow: UnitOfWork,
  input: ComparisonInput,
  correlationId?: string,
): Promise<ComparisonView> {
  const { trx } = uow;
  // the file share-locked first, as a comment's: a delete under way is waited for (then 404), or waits for
  // this request (and then cancels the comparison with the file's others); unlocked, the headers were read
  // from objects being removed (500) and the row refused by its foreign keys (409)
  await visibleFiles(auth, trx).findById(input.base.fileId).forShare();
  const base = await visibleVersion(auth, trx, input.base.fileId, input.base.version);
  const target = await visibleVersion(auth, trx, input.target.fileId, input.target.version);
  if (base.fileId !== target.fileId) {
    throw new UnprocessableError('base and target are not versions of the same file');
  }
  const keyColumns = input.keyColumns && input.keyColumns.length > 0 ? input.keyColumns : null;
  if (keyColumns) {
    const [bh, th] = await Promise.all([headerOf(deps, base, 'base'), headerOf(deps, target, 'target')]);
    const missing: string[] = [];
    for (const k of keyColumns) {
      if (!bh.includes(k)) missing.push(`key column "${k}" is not in the base version`);
      if (!th.includes(k)) missing.push(`key column "${k}" is not in the target version`);
    }
    if (missing.length > 0) throw new BadRequestError(missing);
  }
  const id = randomUUID();
  const start = comparisonStart(
    { fileId: base.fileId, baseVersion: base.version, targetVersion: target.version, comparisonId: id },
    { companyId: auth.companyId, comparisonId: id, correlationId },
    { taskQueue: deps.taskQueue, correlationId },
  );
  const row = await Comparison.scoped(auth.companyId, trx).insertAndFetch({
    id,
    fileId: base.fileId,
    baseVersionId: base.id,
    targetVersionId: target.id,
    baseVersion: base.version,
    targetVersion: target.version,
    automatic: false,
    keyColumns: keyColumns,
    status: 'queued',
    workflowId: start.workflowId,
    correlationId: correlationId ?? null,
    requestedByPersonId: auth.personId,
    requestedByApiKeyId: auth.apiKeyId ?? null,
  });
  await recordAudit(trx, {
    ...auditActor(auth, correlationId ?? uow.correlationId),
    action: 'comparison.requested',
    resourceType: 'comparison',
    resourceId: id,
    details: { fileId: base.fileId, baseVersion: base.version, targetVersion: target.version },
  });
  uow.afterCommit(async () => {
    await deps.temporal.workflow.start(COMPARISON_WORKFLOW, start);
  });
  return presentComparison(row);
}

/**
 * After the upload of version n > 1 commits: the automatic comparison with n − 1,
 * `comparison:<fileId>:v<n-1>:v<n>` (its row is created by the workflow's first activity).
 */
export async function startAutomaticComparison(
  temporal: Client,
  taskQueue: string,
  params: {
    companyId: string;
    fileId: string;
    baseVersionId: string;
    targetVersionId: string;
    baseVersion: number;
    targetVersion: number;
    correlationId?: string;
  },
): Promise<void> {
  const { companyId, correlationId, ...automatic } = params;
  await temporal.workflow.start(
    COMPARISON_WORKFLOW,
    comparisonStart(params, { companyId, automatic, correlationId }, { taskQueue, correlationId }),
  );
}
