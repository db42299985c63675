import type { DuckDBConnection } from '@duckdb/node-api';
import { loadVersion } from './load';
import { profileVersion } from './profile';
import type { AnalysisContext, AnalysisResult, AnalysisStep, LoadOptions, LoadSource } from './types';

/** The step's result, or the abort reason as soon as the build is cancelled (a step need not watch it). */
function untilAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(signal.reason instanceof Error ? signal.reason : new Error('the build was cancelled'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/**
 * The analysis pass: load → profile → steps, on one connection (the profile also on `opts.other`), reading
 * the file once. The caller saves
 * the result (domain/reports/build.ts). Steps run in order; each result is `sections[step.name]`.
 */
export async function runAnalysis(
  conn: DuckDBConnection,
  source: LoadSource,
  steps: readonly AnalysisStep[],
  context: AnalysisContext,
  opts: LoadOptions & {
    /** 'loading', 'profiling', then each step's name */
    onPhase?: (phase: string) => void;
    /** a second connection to the same database (opened while the file loads): the profile's queries use both */
    other?: Promise<DuckDBConnection>;
  },
): Promise<AnalysisResult> {
  opts.onPhase?.('loading');
  const loaded = await loadVersion(conn, source, opts);
  if (opts.signal?.aborted) throw opts.signal.reason;
  opts.onPhase?.('profiling');
  const profile = await profileVersion(conn, loaded, await opts.other);
  const sections: Record<string, unknown> = {};
  for (const step of steps) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    opts.onPhase?.(step.name);
    sections[step.name] = await untilAborted(step.run({ conn, loaded, profile, context }), opts.signal);
  }
  return { loaded, profile, sections };
}
