import type Router from '@koa/router';
import type { Next } from 'koa';
import { AppError } from '../../common/errors';
import type { AppContext } from '../context';

export class MethodNotAllowedError extends AppError {
  constructor(method: string, path: string, allow: string) {
    super(405, `${method} is not allowed on ${path}`, { Allow: allow });
  }
}

/**
 * Runs after the router. A path that exists answers any method it does not have, whatever the method
 * (TRACE, PROPFIND, SEARCH, PURGE, LINK…, which the router would call "not implemented"), with 405, the
 * error body and `Allow`; OPTIONS answers 204 with `Allow`. An unknown path stays 404 whatever the method.
 * A 405 is the client's mistake: logged by the request line only, never as an error.
 */
export function methodNotAllowed(router: Router) {
  return async (ctx: AppContext, next: Next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const matched = router.match(ctx.path, ctx.method);
    if (matched.route) return; // a route ran and left 404 itself
    const methods = new Set<string>();
    for (const layer of matched.path) for (const m of layer.methods) methods.add(m);
    if (methods.size === 0) return;
    methods.add('OPTIONS');
    const allow = [...methods].sort().join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allow);
      ctx.status = 204;
      return;
    }
    throw new MethodNotAllowedError(ctx.method, ctx.path, allow);
  };
}
