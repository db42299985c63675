/** How often the progress is handed to the heartbeat, and at most written to the row, while a run goes on. */
const PROGRESS_MS = 1000;

export interface ProgressReporter<P> {
  /** the progress so far */
  readonly current: P;
  /** merges `change` into the progress; `write: true` writes it to the row now (a phase change) */
  update(change: Partial<P>, options?: { write?: boolean }): void;
  /** stops the heartbeat and waits for the write in flight */
  stop(): Promise<void>;
}

/**
 * The progress of a run (a report build, a comparison): handed to `heartbeat` at once and every second
 * (activities heartbeat with it), and written to the run's row by `write` at most once a second, or at once
 * when asked, one write at a time. A write that fails is ignored: progress is best effort; the save decides.
 */
export function progressReporter<P extends object>(
  initial: P,
  write: (progress: P) => PromiseLike<unknown>,
  heartbeat?: (progress: P) => void,
): ProgressReporter<P> {
  let current = initial;
  let lastWrite = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const flush = (force: boolean) => {
    const now = Date.now();
    if (!force && now - lastWrite < PROGRESS_MS) return;
    lastWrite = now;
    const snapshot = current;
    writing = writing.then(() => write(snapshot)).catch(() => undefined);
  };
  const beat = setInterval(() => {
    heartbeat?.(current);
    flush(false);
  }, PROGRESS_MS);
  heartbeat?.(current);
  return {
    get current() {
      return current;
    },
    update(change, options) {
      current = { ...current, ...change };
      if (options?.write) flush(true);
    },
    async stop() {
      clearInterval(beat);
      await writing;
    },
  };
}
