import { koaBody } from 'koa-body';
import type { Next } from 'koa';
import { UnsupportedMediaTypeError } from '../../common/errors';
import type { AppContext } from '../context';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** JSON bodies only, size-limited; a body of another type is refused (multipart uploads have their own parser). */
export function jsonBody(limitBytes: number) {
  const parse = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    multipart: false,
    urlencoded: false,
    text: false,
    patchKoa: true,
    patchNode: false,
  });
  return async (ctx: AppContext, next: Next) => {
    if (
      WITH_BODY.has(ctx.method) &&
      ctx.request.length &&
      !ctx.is('application/json', 'application/*+json')
    ) {
      if (!ctx.is('multipart/form-data')) throw new UnsupportedMediaTypeError('unsupported content type');
      await next();
      return;
    }
    await parse(ctx, next);
  };
}
