/**
 * The report build, worker side (called by activities/reports.ts). These commands act for the company
 * named by the workflow input (the workflow is the principal); every query is scoped to that company.
 *
 * States: queued → building → ready | failed. A build is identified by (report row, `build` number): the
 * status change that ends it is conditional on that number and on the row being queued/building, so a
 * retried activity, a worker restarted mid-build or a rebuild that superseded it never saves twice and
 * never sends a second event.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import { ForeignKeyViolationError, UniqueViolationError } from 'objection';
import { xlsxLimits } from '../files/xlsx';
import type { Storage } from '../../common/storage';
import type { Config } from '../../common/config';
import { File, FileVersion, Report } from '../../db/models';
import { transact, type UnitOfWork } from '../../db/transaction';
import { withCompany } from '../../db/unitOfWork';
import { notify } from '../notifications/notify';
import { progressReporter } from './progress';
import {
  downloadText,
  openEngine,
  runAnalysis,
  type DownloadedText,
  type AnalysisStep,
  type FailureReason,
  type LoadProgress,
} from './engine';

export interface BuildRequest {
  companyId: string;
  fileId: string;
  fileVersionId: string;
  version: number;
  /** the build number this workflow runs (1: the upload's build) */
  build?: number;
  correlationId?: string;
}

export interface BuildDeps {
  knex: Knex;
  storage: Storage;
  config: Config;
  /** extension steps run after the profile (issue 13 adds rules and detectors here) */
  steps?: readonly AnalysisStep[];
  /** extensions prepared at the start of every build (quality rules, sensitive data: issue 13) */
  extensions?: readonly BuildExtension[];
}

/** What the save transaction knows about the build it saves (ids only, and the report's sections). */
export interface SavedBuild {
  companyId: string;
  fileId: string;
  datasetId: string;
  fileVersionId: string;
  version: number;
  /** the file's visibility, read under the file row lock */
  visibility: string;
  /** the person who uploaded this version (its notifications go to them) */
  uploadedByPersonId: string | null;
  /** the report and the build number saved */
  reportId: string;
  build: number;
  sections: Record<string, unknown>;
}

/**
 * An extension of the build. `prepare` runs when the build starts (after the report is marked building)
 * and returns the steps of this build (e.g. built from the rules read now) and an optional `onSave`, which
 * runs inside the transaction that saves the report, after `report.ready` — so its rows and events exist
 * if and only if the report is saved, once per build.
 */
export interface BuildExtension {
  prepare(
    knex: Knex,
    req: BuildRequest,
  ): Promise<{ steps: AnalysisStep[]; onSave?: (uow: UnitOfWork, saved: SavedBuild) => Promise<void> }>;
}

export interface BuildHooks {
  /** the build was cancelled (the file was deleted): stop and leave nothing behind */
  signal?: AbortSignal;
  /** called at least every second with the progress so far (activities heartbeat with it) */
  heartbeat?: (progress: BuildProgress) => void;
}

export interface BuildProgress extends LoadProgress {
  phase: string;
}

export type BuildOutcome =
  | { status: 'ready' | 'failed'; reportId: string }
  | { status: 'file_deleted' | 'superseded'; reportId: string | null };

function reportQuery(knex: Knex | Knex.Transaction, companyId: string) {
  return Report.scoped(companyId, knex);
}

/**
 * The report row of the version, created `queued` (build 1) when the upload's workflow gets here first.
 * Null when the version is gone (the file was deleted): there is nothing to report on.
 */
export async function prepareBuild(
  knex: Knex,
  req: BuildRequest,
  workflowId: string | null,
): Promise<{ reportId: string; build: number; status: string } | null> {
  try {
    await withCompany(knex, req.companyId, async (trx) =>
      reportQuery(trx, req.companyId)
        .insert({
          id: randomUUID(),
          fileId: req.fileId,
          fileVersionId: req.fileVersionId,
          version: req.version,
          status: 'queued',
          build: 1,
          workflowId,
          correlationId: req.correlationId ?? null,
        })
        .onConflict('fileVersionId')
        .ignore(),
    );
  } catch (err) {
    if (err instanceof ForeignKeyViolationError) return null;
    if (!(err instanceof UniqueViolationError)) throw err;
  }
  const row = await withCompany(knex, req.companyId, async (trx) =>
    reportQuery(trx, req.companyId).findOne({ fileVersionId: req.fileVersionId }),
  );
  return row ? { reportId: row.id, build: row.build, status: row.status } : null;
}

/**
 * The object of one attempt's large result. Named by the attempt too: two attempts of one build can run at
 * once (Temporal retries an attempt whose heartbeat it missed while the first still runs), and the one whose
 * save finds the build ended removes its own object, never the one the saved report names.
 */
function resultKey(storage: Storage, req: BuildRequest, reportId: string, build: number): string {
  const attempt = randomUUID().slice(0, 8);
  return storage.key('reports', req.companyId, req.fileId, `${reportId}-b${build}-${attempt}.json`);
}

async function removeObject(storage: Storage, key: string): Promise<void> {
  try {
    await storage.client.removeObject(storage.bucket, key);
  } catch {
    // a leftover result object is harmless: it is named by a report that no longer points at it
  }
}

/**
 * Runs one build: marks it building, reads the stored version once through the engine pipeline (load →
 * profile → steps), and saves the result with `report.ready` in one transaction. An AnalysisFailure (a
 * file that cannot be analysed) is thrown to the caller, which fails the build at once (not retried).
 */
export async function runBuild(
  deps: BuildDeps,
  req: BuildRequest,
  hooks: BuildHooks = {},
): Promise<BuildOutcome> {
  const { knex, storage, config } = deps;
  const build = req.build ?? 1;
  const report = await withCompany(knex, req.companyId, async (trx) =>
    reportQuery(trx, req.companyId).findOne({ fileVersionId: req.fileVersionId }),
  );
  if (!report) return { status: 'file_deleted', reportId: null };
  if (report.build !== build) return { status: 'superseded', reportId: report.id };
  if (report.status === 'ready' || report.status === 'failed') {
    // an earlier attempt of this build saved it already
    return { status: report.status, reportId: report.id };
  }
  const version = await withCompany(knex, req.companyId, async (trx) =>
    FileVersion.scoped(req.companyId, trx).findById(req.fileVersionId),
  );
  if (!version) return { status: 'file_deleted', reportId: report.id };
  const sizeBytes = Number(version.sizeBytes);
  const started = await withCompany(knex, req.companyId, async (trx) =>
    reportQuery(trx, req.companyId)
      .patch({
        status: 'building',
        startedAt: new Date(),
        rowsRead: 0,
        bytesRead: 0,
        bytesTotal: sizeBytes,
        phase: 'loading',
      })
      .where({ id: report.id, build })
      .whereIn('status', ['queued', 'building']),
  );
  if (started === 0) return { status: 'superseded', reportId: report.id };

  const progress = progressReporter<BuildProgress>(
    { rowsRead: 0, bytesRead: 0, bytesTotal: sizeBytes, phase: 'loading' },
    (p) =>
      withCompany(knex, req.companyId, async (trx) =>
        reportQuery(trx, req.companyId)
          .patch({ rowsRead: p.rowsRead, bytesRead: p.bytesRead, phase: p.phase })
          .where({ id: report.id, build, status: 'building' }),
      ),
    hooks.heartbeat,
  );
  // named after the build (ids only), so an operator — or a test — can tell whose folder it is
  const workDir = path.join(
    config.reports.workDir,
    `build-${req.fileId}-v${req.version}-b${build}-${randomUUID().slice(0, 8)}`,
  );
  let objectKey: string | null = null;
  /** a CSV/TSV version's download, started first: it runs while the extensions prepare and DuckDB opens */
  let download: Promise<DownloadedText> | undefined;
  try {
    if (version.format !== 'xlsx') {
      await mkdir(workDir, { recursive: true });
      download = downloadText(
        {
          open: async () => storage.client.getObject(storage.bucket, version.objectKey),
          encoding: version.encoding,
          linesBeforeHeader: version.linesBeforeHeader,
        },
        workDir,
        (bytes) => progress.update({ bytesRead: bytes }),
        hooks.signal,
      );
      download.catch(() => undefined); // a failure surfaces when the load takes it
    }
    const prepared: Array<Awaited<ReturnType<BuildExtension['prepare']>>> = [];
    for (const extension of deps.extensions ?? []) prepared.push(await extension.prepare(knex, req));
    const steps = [...(deps.steps ?? []), ...prepared.flatMap((p) => p.steps)];
    await mkdir(workDir, { recursive: true });
    const engine = await openEngine({
      threads: config.reports.threads,
      memoryLimitMb: config.reports.memoryLimitMb,
      tempDirectory: path.join(workDir, 'duckdb'),
    });
    // a second connection, opened (its macros installed) while the file loads on the first: the profile's
    // per-column queries run on both at once
    const other = engine.connect();
    other.catch(() => undefined); // awaited by the profile; closed with the engine
    // a connection still opening when the build is cancelled is interrupted by nothing; the load it waits
    // behind is, and runAnalysis stops before the profile
    const interrupt = () => engine.interrupt();
    hooks.signal?.addEventListener('abort', interrupt);
    let result;
    try {
      result = await runAnalysis(
        engine.conn,
        {
          open: async () => storage.client.getObject(storage.bucket, version.objectKey),
          format: version.format,
          delimiter: version.delimiter,
          encoding: version.encoding,
          linesBeforeHeader: version.linesBeforeHeader,
          headerRow: version.headerRow,
          sizeBytes,
          downloaded: download,
        },
        steps,
        {
          companyId: req.companyId,
          fileId: req.fileId,
          fileVersionId: req.fileVersionId,
          version: req.version,
          extra: {},
        },
        {
          maxColumns: config.files.maxColumns,
          maxRows: config.files.maxRows,
          // an XLSX is checked against the upload's guards again on the copy its load reads
          xlsxLimits: xlsxLimits(config.files),
          workDir,
          signal: hooks.signal,
          onProgress: (p) => progress.update(p),
          onPhase: (phase) => progress.update({ phase }, { write: true }),
          other,
        },
      );
    } finally {
      hooks.signal?.removeEventListener('abort', interrupt);
      await other.catch(() => undefined); // settled before the engine closes under it
      engine.close();
    }
    if (hooks.signal?.aborted) throw hooks.signal.reason;

    // save: small results in the row, large ones in MinIO (README "Reports")
    const document = { profile: result.profile, sections: result.sections };
    const json = JSON.stringify(document);
    const bytes = Buffer.byteLength(json);
    if (bytes > config.reports.inlineMaxBytes) {
      objectKey = resultKey(storage, req, report.id, build);
      await storage.client.putObject(storage.bucket, objectKey, Buffer.from(json), bytes, {
        'Content-Type': 'application/json',
      });
    }
    progress.update({ phase: 'saving' });
    const saved = await transact(
      knex,
      async (uow) => {
        const { trx, emit } = uow;
        // the file row first (shared lock): a delete running now either waits for this save (and then
        // removes its object) or has already removed the rows (and this save finds nothing)
        const file = await File.scoped(req.companyId, trx)
          .findById(req.fileId)
          .select('files.id', 'files.datasetId', 'files.visibility')
          .forShare();
        if (!file) return false;
        const updated = await reportQuery(trx, req.companyId)
          .patch({
            status: 'ready',
            finishedAt: new Date(),
            result: objectKey ? null : (document as unknown as object),
            resultObjectKey: objectKey,
            resultBytes: bytes,
            rowsRead: result.loaded.sheets.reduce((n, s) => n + s.rowCount, 0),
            bytesRead: sizeBytes,
            phase: null,
            failureReason: null,
            failureMessage: null,
          })
          .where({ id: report.id, build, status: 'building' });
        if (updated === 0) return false;
        await emit({
          companyId: req.companyId,
          type: 'report.ready',
          data: {
            fileId: req.fileId,
            reportStatus: 'ready',
            version: req.version,
            reportId: report.id,
          },
        });
        const uploadedByPersonId = await versionUploader(trx, req);
        await notify(uow, {
          companyId: req.companyId,
          kind: 'report.ready',
          to: { people: [uploadedByPersonId] },
          resource: { type: 'file', id: req.fileId },
          data: { fileId: req.fileId, version: req.version, reportId: report.id },
          cause: `report:${report.id}:build-${build}:ready`,
        });
        for (const { onSave } of prepared) {
          await onSave?.(uow, {
            companyId: req.companyId,
            fileId: req.fileId,
            datasetId: file.datasetId,
            fileVersionId: req.fileVersionId,
            version: req.version,
            visibility: file.visibility,
            uploadedByPersonId,
            reportId: report.id,
            build,
            sections: result.sections,
          });
        }
        return true;
      },
      { acting: { companyId: req.companyId }, correlationId: req.correlationId },
    );
    if (!saved) {
      if (objectKey) await removeObject(storage, objectKey);
      const now = await withCompany(knex, req.companyId, async (trx) =>
        reportQuery(trx, req.companyId).findById(report.id),
      );
      if (!now) return { status: 'file_deleted', reportId: null };
      if (now.build === build && (now.status === 'ready' || now.status === 'failed')) {
        return { status: now.status, reportId: report.id };
      }
      return { status: 'superseded', reportId: report.id };
    }
    return { status: 'ready', reportId: report.id };
  } catch (err) {
    // the save's COMMIT may have failed after committing (the connection lost before its answer): the
    // object stays when the row names it, or when that cannot be read (a leftover is harmless, a ready
    // report without its result is not)
    if (objectKey && !(await resultSaved(knex, req, report.id, objectKey))) {
      await removeObject(storage, objectKey);
    }
    throw err;
  } finally {
    await progress.stop();
    // a download the load never took (the build failed before it) ends before its folder is removed
    await download?.then(
      () => undefined,
      () => undefined,
    );
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Whether the report row names `objectKey` as its result; true when the row cannot be read. */
async function resultSaved(knex: Knex, req: BuildRequest, reportId: string, objectKey: string) {
  try {
    const row = await withCompany(knex, req.companyId, async (trx) =>
      reportQuery(trx, req.companyId).findById(reportId).select('reports.resultObjectKey'),
    );
    return row?.resultObjectKey === objectKey;
  } catch {
    return true;
  }
}

/** The person who uploaded the version being built (null if the row is gone). */
async function versionUploader(trx: Knex.Transaction, req: BuildRequest): Promise<string | null> {
  const row = await FileVersion.scoped(req.companyId, trx)
    .findById(req.fileVersionId)
    .select('fileVersions.uploadedByPersonId');
  return row?.uploadedByPersonId ?? null;
}

/**
 * Ends a build as failed with a reason code (never a cell value) and `report.failed`, in one transaction;
 * nothing happens when the build already ended or was superseded.
 */
export async function failBuild(
  knex: Knex,
  req: BuildRequest,
  reason: FailureReason,
  message: string,
): Promise<{ status: string }> {
  const build = req.build ?? 1;
  return transact(
    knex,
    async ({ trx, emit }) => {
      const report = await reportQuery(trx, req.companyId)
        .findOne({ fileVersionId: req.fileVersionId })
        .forUpdate();
      if (!report) return { status: 'file_deleted' };
      if (report.build !== build) return { status: 'superseded' };
      if (report.status === 'ready' || report.status === 'failed') return { status: report.status };
      await reportQuery(trx, req.companyId)
        .patch({
          status: 'failed',
          finishedAt: new Date(),
          failureReason: reason,
          failureMessage: message,
          phase: null,
        })
        .where({ id: report.id });
      await emit({
        companyId: req.companyId,
        type: 'report.failed',
        data: { fileId: req.fileId, reportStatus: 'failed', version: req.version, reportId: report.id },
      });
      await notify(trx, {
        companyId: req.companyId,
        kind: 'report.failed',
        to: { people: [await versionUploader(trx, req)] },
        resource: { type: 'file', id: req.fileId },
        data: { fileId: req.fileId, version: req.version, reportId: report.id, reason },
        cause: `report:${report.id}:build-${build}:failed`,
      });
      return { status: 'failed' };
    },
    { acting: { companyId: req.companyId }, correlationId: req.correlationId },
  );
}
