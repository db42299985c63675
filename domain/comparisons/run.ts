/**
 * The comparison run, worker side (called by activities/comparisons.ts). These commands act for the
 * company named by the workflow input (the workflow is the principal); every query is scoped to it.
 *
 * States: queued → comparing → ready | failed (as reports). The status change that ends a run is
 * conditional on the row being queued/comparing, in one transaction with its events, so a retried
 * activity or a worker restarted mid-run never saves twice and never sends a second event. Row changes are
 * written to comparison_changes before that transaction (a retried attempt first deletes what an earlier
 * attempt wrote; a failed batch fails the attempt); that transaction saves `ready` only when exactly
 * `changeCount` changes, numbered 1…changeCount, are there. They are read only once the comparison is ready.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import { ForeignKeyViolationError, UniqueViolationError } from 'objection';
import { xlsxLimits } from '../files/xlsx';
import { ANALYSIS_START_GRACE_MS } from '../files/analysisGrace';
import type { Storage } from '../../common/storage';
import type { Config } from '../../common/config';
import { Comparison, ComparisonChange, File, FileVersion, Report } from '../../db/models';
import { transact } from '../../db/transaction';
import { withCompany } from '../../db/unitOfWork';
import { progressReporter, type ProgressReporter } from '../reports/progress';
import { readResult } from '../reports/result';
import {
  AnalysisFailure,
  downloadText,
  loadVersion,
  openEngine,
  type DownloadedText,
  type InferredType,
  type LoadedVersion,
} from '../reports/engine';
import {
  compareVersions,
  inferTypes,
  MissingKeyColumn,
  UncheckedReadFailed,
  type SheetTypes,
} from './engine';

/** Failure reasons: the reports' (README "Reports") plus `missing_key_column`. */
export type ComparisonFailureReason =
  | 'unparsable_file'
  | 'too_many_columns'
  | 'too_many_rows'
  | 'unsafe_workbook'
  | 'file_missing'
  | 'missing_key_column'
  | 'internal_error';

/** A comparison that cannot succeed (bad file, missing key column): failed at once, not retried. */
export class ComparisonFailure extends Error {
  constructor(
    public readonly reason: ComparisonFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'ComparisonFailure';
  }
}

/**
 * A batch of changes found the comparison's row gone (deleted with its file) or no longer comparing (ended by
 * another attempt) while its changes were written: nothing more to do.
 */
class ComparisonDeleted extends Error {
  constructor() {
    super('the comparison was deleted or ended while its changes were written');
    this.name = 'ComparisonDeleted';
  }
}

/**
 * The run could not save a whole result (changes missing, the row in an unexpected state): the attempt fails
 * and is retried from a clean slate.
 */
class ComparisonIncomplete extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ComparisonIncomplete';
  }
}

export interface ComparisonRequest {
  companyId: string;
  /** a requested comparison (its row exists) */
  comparisonId?: string;
  /** the automatic comparison of a new version with its predecessor (its row is created by prepare) */
  automatic?: {
    fileId: string;
    baseVersionId: string;
    targetVersionId: string;
    baseVersion: number;
    targetVersion: number;
  };
  correlationId?: string;
}

export interface RunDeps {
  knex: Knex;
  storage: Storage;
  config: Config;
}

export interface RunHooks {
  signal?: AbortSignal;
  heartbeat?: (progress: RunProgress) => void;
  /** tests only: called after comparing, before saving (phase `saving`) */
  beforeSave?: BeforeSaveHook;
}

/** Tests only: holds a comparison of `fileId` after comparing, before saving; `signal` aborts when cancelled. */
export type BeforeSaveHook = (at: { fileId: string; signal?: AbortSignal }) => Promise<void>;

export interface RunProgress {
  phase: string;
  rowsRead: number;
  bytesRead: number;
  bytesTotal: number;
  sheetsDone: number;
  sheetsTotal: number;
  changesSaved: number;
}

export type RunOutcome = { status: 'ready' | 'failed' | 'file_deleted'; comparisonId: string | null };

/** changes per INSERT: a chunk of the engine's (2048) is written as several, two at a time (measured: 2048
 * changes as one statement 30 ms, as four of 512 two at a time 20 ms) */
const CHANGES_BATCH = 512;
/** change batches written concurrently (the worker's pool has more connections: progress writes too) */
const INSERTS_IN_FLIGHT = 2;

function q(knex: Knex | Knex.Transaction, companyId: string) {
  return Comparison.scoped(companyId, knex);
}

/** The comparison row (the automatic one created queued on first call); null when the file is gone. */
export async function prepareComparison(
  knex: Knex,
  req: ComparisonRequest,
  workflowId: string | null,
): Promise<{ comparisonId: string; status: string } | null> {
  const comparisonId = req.comparisonId;
  if (comparisonId) {
    const row = await withCompany(knex, req.companyId, async (trx) =>
      q(trx, req.companyId).findById(comparisonId),
    );
    return row ? { comparisonId: row.id, status: row.status } : null;
  }
  const a = req.automatic!;
  try {
    await withCompany(knex, req.companyId, async (trx) =>
      q(trx, req.companyId).insert({
        id: randomUUID(),
        fileId: a.fileId,
        baseVersionId: a.baseVersionId,
        targetVersionId: a.targetVersionId,
        baseVersion: a.baseVersion,
        targetVersion: a.targetVersion,
        automatic: true,
        status: 'queued',
        workflowId,
        correlationId: req.correlationId ?? null,
      }),
    );
  } catch (err) {
    if (err instanceof ForeignKeyViolationError) return null;
    if (!(err instanceof UniqueViolationError)) throw err;
  }
  const row = await withCompany(knex, req.companyId, async (trx) =>
    q(trx, req.companyId).findOne({ targetVersionId: a.targetVersionId, automatic: true }),
  );
  return row ? { comparisonId: row.id, status: row.status } : null;
}

/**
 * Whether the reports of the comparison's two versions have settled (ready or failed, or there is none):
 * the comparison workflow waits for that before comparing, so that it takes their inferred types rather
 * than classifying every cell again (a report built at upload is usually moments away). A version without
 * a report row that was uploaded less than ANALYSIS_START_GRACE_MS ago is waited for too: the upload starts
 * its report workflow and the comparison's at the same moment, and the report's row is created by that
 * workflow's first activity (after that grace its start counts as lost; the workflow's own bound,
 * COMPARISON_REPORT_WAIT_SECONDS, holds in any case). True when the comparison is gone (nothing to wait for).
 */
export async function reportsSettled(knex: Knex, companyId: string, comparisonId: string): Promise<boolean> {
  return withCompany(knex, companyId, async (trx) => {
    const row = await q(trx, companyId).findById(comparisonId);
    if (!row || row.status !== 'queued') return true;
    const versionIds = [row.baseVersionId, row.targetVersionId];
    const pending = await Report.scoped(companyId, trx)
      .whereIn('fileVersionId', versionIds)
      .whereIn('status', ['queued', 'building'])
      .resultSize();
    if (pending > 0) return false;
    const awaited = await FileVersion.scoped(companyId, trx)
      .whereIn('fileVersions.id', versionIds)
      .whereRaw('file_versions.created_at > now() - make_interval(secs => ?)', [
        ANALYSIS_START_GRACE_MS / 1000,
      ])
      .whereNotExists(Report.scoped(companyId, trx).whereColumn('reports.fileVersionId', 'fileVersions.id'))
      .resultSize();
    return awaited === 0;
  });
}

/** Inferred types from the version's ready report (per sheet, per column), when it has one. */
async function reportTypes(deps: RunDeps, companyId: string, versionId: string): Promise<SheetTypes | null> {
  const report = await withCompany(deps.knex, companyId, async (trx) =>
    Report.scoped(companyId, trx).findOne({ fileVersionId: versionId }),
  );
  if (!report) return null;
  // a result that cannot be read (its object gone): the comparison classifies the cells itself
  const result = await readResult(deps.storage, report).catch(() => null);
  const sheets = result?.profile?.sheets;
  if (!sheets) return null;
  return sheets.map((sheet) => sheet.columnProfiles.map((c) => c.inferredType as InferredType));
}

/** Whether a report's types fit the loaded sheets (same number of sheets and of columns). */
function fits(types: SheetTypes, loaded: LoadedVersion): boolean {
  return (
    types.length === loaded.sheets.length &&
    types.every((cols, i) => cols.length === loaded.sheets[i].columns.length)
  );
}

/**
 * Runs one comparison: loads both stored versions into one DuckDB database (the reports engine's loader),
 * takes the inferred types from their ready reports (or infers them by the same rule when a report is not
 * ready), compares, writes the row changes, and saves the summary with the events in one transaction.
 */
export async function runComparison(
  deps: RunDeps,
  req: ComparisonRequest,
  hooks: RunHooks = {},
): Promise<RunOutcome> {
  const { knex, storage, config } = deps;
  // the workflow names the row its prepare activity found or created; prepared here only when called without
  const comparisonId = req.comparisonId ?? (await prepareComparison(knex, req, null))?.comparisonId;
  if (!comparisonId) return { status: 'file_deleted', comparisonId: null };
  const workDir = path.join(config.reports.workDir, `compare-${randomUUID()}`);
  // started first, as it waits on nothing while the row is looked up and marked comparing: DuckDB's database
  // with its two connections (the CSV/TSV versions' downloads start as soon as the row is read, below)
  const engineOpening = (async () => {
    const opened = await openEngine({
      threads: config.reports.threads,
      memoryLimitMb: config.reports.memoryLimitMb,
      tempDirectory: path.join(workDir, 'duckdb'),
    });
    try {
      return { engine: opened, other: await opened.connect() };
    } catch (err) {
      opened.close();
      throw err;
    }
  })();
  engineOpening.catch(() => undefined); // awaited below, or released
  /** the downloads started at once (awaited before the work folder is removed) */
  const prefetched: Array<Promise<DownloadedText>> = [];
  /** what was started early: the engine, closed once the run is over; the downloads, settled */
  const release = async () => {
    await engineOpening.then(
      ({ engine }) => engine.close(),
      () => undefined,
    );
    await Promise.allSettled(prefetched);
  };
  try {
    // the row and its two versions in one transaction (each one costs round trips before any work)
    const { row, base, target } = await withCompany(knex, req.companyId, async (trx) => {
      const found = await q(trx, req.companyId).findById(comparisonId);
      if (!found || found.status === 'ready' || found.status === 'failed') return { row: found };
      const [b, t] = await Promise.all([
        FileVersion.scoped(req.companyId, trx).findById(found.baseVersionId),
        FileVersion.scoped(req.companyId, trx).findById(found.targetVersionId),
      ]);
      return { row: found, base: b, target: t };
    });
    if (!row) return { status: 'file_deleted', comparisonId: null };
    if (row.status === 'ready' || row.status === 'failed') return { status: row.status, comparisonId };
    if (!base || !target) return { status: 'file_deleted', comparisonId };
    /** the outcome of a run that did not save: the row is gone (file deleted) or another attempt ended it */
    const outcomeNow = async (): Promise<RunOutcome> => {
      const now = await withCompany(knex, req.companyId, async (trx) =>
        q(trx, req.companyId).findById(comparisonId),
      );
      if (!now) return { status: 'file_deleted', comparisonId: null };
      if (now.status === 'ready' || now.status === 'failed') return { status: now.status, comparisonId };
      throw new ComparisonIncomplete(`the comparison was not saved and is still ${now.status}`);
    };
    const bytesTotal = Number(base.sizeBytes) + Number(target.sizeBytes);
    const versions = [base, target];
    /** a failure's message naming the version it is about, as POST /comparisons' 422 does */
    const ofVersion = (i: number, message: string) =>
      `the ${i === 0 ? 'base' : 'target'} version (${versions[i].version}): ${message}`;
    const open = (i: number) => storage.client.getObject(storage.bucket, versions[i].objectKey);
    // each version's report looked up at once (a version loaded again reuses the answer)
    const lookups = versions.map((v) => {
      const lookup = reportTypes(deps, req.companyId, v.id);
      lookup.catch(() => undefined); // awaited by the load; handled if the run ends first
      return lookup;
    });
    // a CSV/TSV version downloaded at once, while DuckDB starts and the row is marked comparing (its load
    // takes the file); an XLSX is read by its load
    const read = [0, 0];
    const progressNow: { reporter?: ProgressReporter<RunProgress> } = {};
    await mkdir(workDir, { recursive: true });
    const downloads = versions.map((v, i) => {
      if (v.format === 'xlsx') return undefined;
      const download = downloadText(
        { open: () => open(i), encoding: v.encoding, linesBeforeHeader: v.linesBeforeHeader },
        workDir,
        (bytes) => {
          read[i] = bytes;
          progressNow.reporter?.update({ bytesRead: read[0] + read[1] });
        },
        hooks.signal,
      );
      download.catch(() => undefined); // a failure surfaces when the load takes it
      prefetched.push(download);
      return download;
    });
    const started = await withCompany(knex, req.companyId, async (trx) => {
      const n = await q(trx, req.companyId)
        .patch({ status: 'comparing', startedAt: new Date(), phase: 'loading', changesSaved: 0 })
        .where({ id: comparisonId })
        .whereIn('status', ['queued', 'comparing']);
      // an earlier attempt (a worker stopped mid-run) may have written some changes
      if (n > 0) await ComparisonChange.scoped(req.companyId, trx).where({ comparisonId }).delete();
      return n;
    });
    if (started === 0) return { status: 'file_deleted', comparisonId };

    const progress = progressReporter<RunProgress>(
      {
        phase: 'loading',
        rowsRead: 0,
        bytesRead: 0,
        bytesTotal,
        sheetsDone: 0,
        sheetsTotal: 0,
        changesSaved: 0,
      },
      (p) =>
        withCompany(knex, req.companyId, async (trx) =>
          q(trx, req.companyId)
            .patch({
              phase: p.phase,
              sheetsDone: p.sheetsDone,
              sheetsTotal: p.sheetsTotal,
              changesSaved: p.changesSaved,
            })
            .where({ id: comparisonId, status: 'comparing' }),
        ),
      hooks.heartbeat,
    );
    progressNow.reporter = progress;
    try {
      await mkdir(workDir, { recursive: true });
      const { engine, other } = await engineOpening;
      // the two versions are loaded and typed concurrently, each on its own connection to the one database
      const conns = [engine.conn, other];
      const interrupt = () => engine.interrupt();
      hooks.signal?.addEventListener('abort', interrupt);
      let summary;
      let seq = 0;
      /** the batches being written (each settles without rejecting: a failure is kept in `writeFailed`) */
      const writing = new Set<Promise<void>>();
      /** the first batch whose write failed: the run fails with it (the retry deletes what was written) */
      let writeFailed: { error: unknown } | undefined;
      const checkWrites = () => {
        if (writeFailed) throw writeFailed.error;
      };
      try {
        /**
         * the views of a version loaded unchecked, before it is loaded again under the same names; the
         * downloaded copy they read is handed to that next load (not downloaded again)
         */
        const dropUnchecked = async (i: number, l: LoadedVersion) => {
          for (const s of l.sheets) {
            if (!s.unchecked) continue;
            await conns[i].run(`DROP VIEW IF EXISTS ${s.table}`);
            if (s.rawTable) await conns[i].run(`DROP VIEW IF EXISTS ${s.rawTable}`);
            if (s.download) downloads[i] = Promise.resolve(s.download);
          }
        };
        /** a version loaded and typed; a file that cannot be analysed fails naming the version */
        const loadAndType = (i: number, checkedLoad = false) =>
          loadAndTypeOf(i, checkedLoad).catch((err: unknown) => {
            if (err instanceof AnalysisFailure)
              throw new AnalysisFailure(err.reason, ofVersion(i, err.message));
            throw err;
          });
        const loadAndTypeOf = async (i: number, checkedLoad: boolean) => {
          const v = versions[i];
          // the ready report's types when there is one (looked up while the version downloads); else the
          // load's checking pass classifies the cells
          const fromReportLookup = lookups[i];
          const load = (skipCheck: boolean) => {
            // the download started at once, taken by the first load (or the copy the dropped views read)
            const downloaded = downloads[i];
            downloads[i] = undefined;
            return loadVersion(
              conns[i],
              {
                open: () => open(i),
                downloaded,
                format: v.format,
                delimiter: v.delimiter,
                encoding: v.encoding,
                linesBeforeHeader: v.linesBeforeHeader,
                headerRow: v.headerRow,
                sizeBytes: Number(v.sizeBytes),
              },
              {
                maxColumns: config.files.maxColumns,
                maxRows: config.files.maxRows,
                // an XLSX is checked against the upload's guards again on the copy its load reads
                xlsxLimits: xlsxLimits(config.files),
                workDir,
                tablePrefix: i === 0 ? 'b_' : 't_',
                lazy: true,
                // never rejects (an XLSX load does not await it): the lookup's error surfaces below
                classify: fromReportLookup.then(
                  (types) => types === null,
                  () => true,
                ),
                // with the report's types, no checking pass: the comparison's first pass checks the file
                skipCheck,
                signal: hooks.signal,
                onProgress: (p) => {
                  read[i] = p.bytesRead;
                  progress.update({ rowsRead: p.rowsRead, bytesRead: read[0] + read[1] });
                },
              },
            );
          };
          let l = await load(!checkedLoad);
          const fromReport = await fromReportLookup;
          if (fromReport && fits(fromReport, l)) return { l, t: fromReport };
          // the report saw another shape (it read the file the long way: rows wider than the header): this
          // version is loaded the checked way and typed by the same rule as a report
          if (l.sheets.some((s) => s.unchecked)) {
            await dropUnchecked(i, l);
            l = await load(false);
          }
          return { l, t: await inferTypes(conns[i], l) };
        };
        const both = await Promise.allSettled([loadAndType(0), loadAndType(1)]);
        for (const r of both) if (r.status === 'rejected') throw r.reason;
        const [lb, lt] = both.map(
          (r) => (r as PromiseFulfilledResult<{ l: LoadedVersion; t: SheetTypes }>).value,
        );
        const loaded: LoadedVersion[] = [lb.l, lt.l];
        const types: SheetTypes[] = [lb.t, lt.t];
        if (hooks.signal?.aborted) throw hooks.signal.reason;
        progress.update({ phase: 'comparing', bytesRead: bytesTotal }, { write: true });
        /** row changes as the engine writes them (JSON texts of RowChange), not yet handed to a write */
        const batch: string[] = [];
        let saved = 0;
        /** writes what the batch holds, CHANGES_BATCH changes per statement */
        const flush = async () => {
          while (batch.length > 0) await write(batch.splice(0, CHANGES_BATCH));
        };
        const write = async (changes: string[]) => {
          checkWrites();
          // one parameter (the batch as one JSON array of the engine's texts, expanded by PostgreSQL) rather
          // than nine per row: knex building and PostgreSQL parsing 9000 parameters cost more than the rows
          // (measured); each change numbered from its position in the batch
          const first = seq;
          seq += changes.length;
          const rows = { count: changes.length, json: `[${changes.join(',')}]` };
          // up to INSERTS_IN_FLIGHT batches written at once (each on its own pooled connection), so that
          // writing overlaps reading the next changes; a failed write is kept until the run looks (the next
          // write, the next chunk of changes, the end), however long ago it settled
          while (writing.size >= INSERTS_IN_FLIGHT) {
            await Promise.race(writing);
            checkWrites();
          }
          const written: Promise<void> = withCompany(knex, req.companyId, async (trx) => {
            // the comparison's row locked once for the batch, as a foreign key's check would for every row
            // (migration 20261123001410): a comparison deleted meanwhile (its file deleted), or ended by
            // another attempt (one that outlived its timeout), gets no changes
            const inserted: { rowCount: number } = await trx.raw(
              `WITH c AS (SELECT id FROM comparisons WHERE id = ?::uuid AND status = 'comparing' FOR KEY SHARE)
             INSERT INTO comparison_changes
               (comparison_id, company_id, seq, sheet, kind, key, base_row, target_row, columns)
             SELECT c.id, ?::uuid, ?::integer + x.n::integer, x.sheet, x.kind, x.key, x.base_row, x.target_row,
               x.columns
             FROM c, ROWS FROM (jsonb_to_recordset(?::jsonb) AS (sheet text, kind text, key jsonb,
               "baseRow" bigint, "targetRow" bigint, columns jsonb))
               WITH ORDINALITY AS x(sheet, kind, key, base_row, target_row, columns, n)`,
              [comparisonId, req.companyId, first, rows.json],
            );
            if (inserted.rowCount !== rows.count) throw new ComparisonDeleted();
          });
          const tracked: Promise<void> = written.then(
            () => {
              writing.delete(tracked);
              saved += rows.count;
              progress.update({ changesSaved: saved });
            },
            (error: unknown) => {
              writing.delete(tracked);
              writeFailed ??= { error };
            },
          );
          writing.add(tracked);
        };
        const compare = () =>
          compareVersions(engine.conn, loaded[0], loaded[1], types[0], types[1], {
            keyColumns: row.keyColumns ?? undefined,
            other: conns[1],
            signal: hooks.signal,
            maxRows: config.files.maxRows,
            onProgress: (p) => {
              progress.update({ sheetsDone: p.sheetsDone, sheetsTotal: p.sheetsTotal });
            },
            onChanges: async (changes) => {
              checkWrites();
              batch.push(...changes);
              while (batch.length >= CHANGES_BATCH) await write(batch.splice(0, CHANGES_BATCH));
            },
          });
        // a version loaded unchecked that DuckDB's strict reader refuses (its first pass failed before any
        // change was emitted), one or both: each loaded again the checked way (the normalising path),
        // compared again. A version loaded checked is never refused, so this ends by the third try.
        for (;;) {
          try {
            summary = await compare();
            break;
          } catch (err) {
            if (!(err instanceof UncheckedReadFailed) || seq > 0 || batch.length > 0) throw err;
            const refused = err.sides.map((side) => (side === 'base' ? 0 : 1));
            if (refused.some((i) => !loaded[i].sheets.some((s) => s.unchecked))) throw err;
            const again = await Promise.allSettled(
              refused.map(async (i) => {
                await dropUnchecked(i, loaded[i]);
                return { i, ...(await loadAndType(i, true)) };
              }),
            );
            for (const r of again) if (r.status === 'rejected') throw r.reason;
            for (const r of again) {
              const { i, l, t } = (
                r as PromiseFulfilledResult<{ i: number; l: LoadedVersion; t: SheetTypes }>
              ).value;
              loaded[i] = l;
              types[i] = t;
            }
          }
        }
        await flush();
        // DuckDB is done: its database freed while the last batches are written (close is idempotent)
        hooks.signal?.removeEventListener('abort', interrupt);
        engine.close();
        await Promise.all(writing);
        checkWrites();
      } catch (err) {
        if (err instanceof AnalysisFailure) throw new ComparisonFailure(err.reason, err.message);
        if (err instanceof MissingKeyColumn) throw new ComparisonFailure('missing_key_column', err.message);
        throw err;
      } finally {
        // nothing written after the run has ended (a failed run's changes are deleted)
        await Promise.all(writing);
        hooks.signal?.removeEventListener('abort', interrupt);
        engine.close();
      }
      if (hooks.signal?.aborted) throw hooks.signal.reason;

      progress.update({ phase: 'saving' }, { write: true });
      await hooks.beforeSave?.({ fileId: row.fileId, signal: hooks.signal });
      if (hooks.signal?.aborted) throw hooks.signal.reason;
      const result = summary;
      const saved = await transact(
        knex,
        async ({ trx, emit }) => {
          const file = await File.scoped(req.companyId, trx)
            .findById(row.fileId)
            .select('files.id')
            .forShare();
          if (!file) return false;
          // the row locked against change writes (each batch holds FOR KEY SHARE on it) while its changes
          // are counted: a ready comparison has exactly changeCount changes, numbered 1..changeCount
          const comparing = await q(trx, req.companyId)
            .findOne({ id: comparisonId, status: 'comparing' })
            .select('comparisons.id')
            .forUpdate();
          if (!comparing) return false;
          const stored = (await ComparisonChange.scoped(req.companyId, trx)
            .where({ comparisonId })
            .first()
            .select(
              trx.raw('count(*)::integer AS n'),
              trx.raw('coalesce(min(seq), 1) AS lo'),
              trx.raw('coalesce(max(seq), 0) AS hi'),
            )) as unknown as { n: number; lo: number; hi: number };
          if (stored.n !== seq || stored.lo !== 1 || stored.hi !== seq) {
            // retried: the next attempt deletes them and writes them again
            throw new ComparisonIncomplete(`${stored.n} changes were written of the ${seq} found`);
          }
          const updated = await q(trx, req.companyId)
            .patch({
              status: 'ready',
              finishedAt: new Date(),
              result: result as unknown as object,
              changeCount: seq,
              changesSaved: seq,
              phase: null,
              sheetsDone: result.sheets.length,
              sheetsTotal: result.sheets.length,
              failureReason: null,
              failureMessage: null,
            })
            .where({ id: comparisonId, status: 'comparing' });
          if (updated === 0) return false;
          // events for the automatic comparison of a new version only (README "Comparisons")
          if (row.automatic) {
            const ids = {
              fileId: row.fileId,
              datasetId: target.datasetId,
              version: row.targetVersion,
              previousVersion: row.baseVersion,
            };
            if (result.added + result.removed + result.changed > 0) {
              await emit({
                companyId: req.companyId,
                type: 'dataset.changed',
                data: {
                  ...ids,
                  added: result.added,
                  removed: result.removed,
                  changed: result.changed,
                  unchanged: result.unchanged,
                  comparisonId,
                },
              });
            }
            if (result.columnsRemoved.length > 0 || result.typeChanges.length > 0) {
              await emit({
                companyId: req.companyId,
                type: 'dataset.schema_changed',
                data: {
                  ...ids,
                  columnsAdded: result.columnsAdded,
                  columnsRemoved: result.columnsRemoved,
                  typeChanges: result.typeChanges,
                  comparisonId,
                },
              });
            }
          }
          return true;
        },
        {
          acting: { companyId: req.companyId },
          correlationId: req.correlationId ?? row.correlationId ?? undefined,
        },
      );
      if (!saved) return await outcomeNow();
      return { status: 'ready', comparisonId };
    } catch (err) {
      // the comparison's row was deleted (with its file), or the comparison ended, while its changes were
      // written
      if (err instanceof ComparisonDeleted) return await outcomeNow();
      throw err;
    } finally {
      await progress.stop();
    }
  } finally {
    await release();
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Ends a comparison as failed (a reason code, never a cell value) and deletes the changes an attempt wrote, in
 * one transaction; a no-op once it has ended (a failed comparison's leftover changes, if any, are deleted).
 */
export async function failComparison(
  knex: Knex,
  req: ComparisonRequest,
  comparisonId: string,
  reason: ComparisonFailureReason,
  message: string,
): Promise<{ status: string }> {
  const updated = await withCompany(knex, req.companyId, async (trx) => {
    const n = await q(trx, req.companyId)
      .patch({
        status: 'failed',
        finishedAt: new Date(),
        failureReason: reason,
        failureMessage: message,
        phase: null,
      })
      .where({ id: comparisonId })
      .whereIn('status', ['queued', 'comparing']);
    const failed = n > 0 || (await q(trx, req.companyId).findById(comparisonId))?.status === 'failed';
    if (failed) await ComparisonChange.scoped(req.companyId, trx).where({ comparisonId }).delete();
    return n;
  });
  return { status: updated > 0 ? 'failed' : 'ended' };
}
