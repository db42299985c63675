import type { Next } from 'koa';
import type { AppContext } from '../context';

/**
 * `Cache-Control: no-store` on every answer unless its route says otherwise (the documentation page's static
 * files): answers carry tokens, keys, profiles and audit entries, which no browser or proxy cache should keep
 * (RFC 9111; RFC 6749 asks it of token answers). Set before the route runs, so errors carry it too.
 */
export function noStore() {
  return async (ctx: AppContext, next: Next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
