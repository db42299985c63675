import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { AppContext } from '../context';

const WELL_FORMED = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Correlation id for every request: the caller's X-Request-Id when well-formed, a new UUID otherwise.
 * Echoed as X-Request-Id, put in every error body and on every log line of the request.
 */
export function correlation() {
  return async (ctx: AppContext, next: Next) => {
    const given = ctx.get('X-Request-Id');
    const correlationId = WELL_FORMED.test(given) ? given : randomUUID();
    ctx.state.correlationId = correlationId;
    ctx.state.log = ctx.deps.logger.child({ correlationId });
    ctx.set('X-Request-Id', correlationId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, durationMs: Math.round(ms * 10) / 10 },
        'request',
      );
    }
  };
}
