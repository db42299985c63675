import path from 'node:path';
import { ROOT } from './env';

/** The project's pinned `temporal` CLI (scripts/services.sh installs it); nothing is downloaded at test time. */
export function temporalCliPath(): string {
  return process.env.TEMPORAL_CLI_PATH ?? path.join(ROOT, '.local', 'bin', 'temporal');
}

/** Polls `check` until it returns a value, at most `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  { timeoutMs = 15_000, intervalMs = 100, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
