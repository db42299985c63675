import { Runtime } from '@temporalio/worker';
import type { Logger } from '../common/logger';

let installed = false;

/** Routes the Temporal SDK's own log lines through our structured logger (once per process). */
export function installTemporalRuntime(logger: Logger): void {
  if (installed) return;
  installed = true;
  const child = logger.child({ component: 'temporal-sdk' });
  const at =
    (level: 'trace' | 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, meta?: Record<string, unknown>) =>
      child[level](meta ?? {}, message);
  Runtime.install({
    logger: {
      log: (level, message, meta) => {
        const name = level.toLowerCase() as 'trace' | 'debug' | 'info' | 'warn' | 'error';
        child[name](meta ?? {}, message);
      },
      trace: at('trace'),
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
    },
  });
}
