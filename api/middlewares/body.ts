import { koaBody } from 'koa-body';
import type { Next } from 'koa';
import { BadRequestError, UnsupportedMediaTypeError } from '../../common/errors';
import type { AppContext } from '../context';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
/** Content codings a JSON body may arrive in (decompressed while read, within the same size limit). */
const ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);

/** An error the parser raised itself (size, JSON, charset) carries an HTTP status; a zlib one does not. */
function hasHttpStatus(err: unknown): boolean {
  const e = err as { status?: unknown; statusCode?: unknown } | undefined;
  return typeof e?.status === 'number' || typeof e?.statusCode === 'number';
}

/** How deep a JSON body may nest (objects and arrays); deeper is 400 before anything walks it. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether a parsed JSON value nests deeper than `max` levels of objects and arrays. Iterative: a value nested
 * thousands deep (a 10 KB body can be) must not overflow the stack of whatever walks it next (the NUL check,
 * the Idempotency-Key fingerprint, a schema).
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const item of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>))
      if (item !== null && typeof item === 'object') stack.push([item, depth + 1]);
  }
  return false;
}

/**
 * JSON bodies only, size-limited (after decompression); a body of another type is refused (multipart
 * uploads have their own parser). Content-Encoding: gzip, deflate or br is decompressed while read; a body
 * so labelled that does not decompress is 400, another coding 415, and a compressed multipart upload 415
 * (uploads are streamed as sent). A body nesting deeper than MAX_JSON_DEPTH is 400.
 */
export function jsonBody(limitBytes: number | ((ctx: AppContext) => number)) {
  // one parser per limit (JSON_BODY_LIMIT_BYTES, and a route's own bodyLimitBytes such as /mcp's)
  const parsers = new Map<number, ReturnType<typeof koaBody>>();
  const parserFor = (limit: number) => {
    let parser = parsers.get(limit);
    if (!parser) {
      parser = koaBody({
        json: true,
        jsonStrict: true,
        jsonLimit: limit,
        multipart: false,
        urlencoded: false,
        text: false,
        patchKoa: true,
        patchNode: false,
      });
      parsers.set(limit, parser);
    }
    return parser;
  };
  return async (ctx: AppContext, next: Next) => {
    const parse = parserFor(typeof limitBytes === 'number' ? limitBytes : limitBytes(ctx));
    const hasBody =
      WITH_BODY.has(ctx.method) &&
      (Boolean(ctx.request.length) || ctx.request.get('Transfer-Encoding') !== '');
    const encoding = (ctx.request.get('Content-Encoding') || 'identity').trim().toLowerCase();
    if (hasBody && !ENCODINGS.has(encoding)) {
      throw new UnsupportedMediaTypeError(
        `unsupported content encoding "${encoding}": send gzip, deflate, br or identity`,
      );
    }
    // a body sent chunked (no Content-Length) is a body too: it is refused like one with a length
    if (hasBody && !ctx.is('application/json', 'application/*+json')) {
      if (!ctx.is('multipart/form-data')) throw new UnsupportedMediaTypeError('unsupported content type');
      if (encoding !== 'identity') {
        throw new UnsupportedMediaTypeError(
          `unsupported content encoding "${encoding}" for multipart/form-data: send the form uncompressed`,
        );
      }
      await next();
      return;
    }
    // the decompressor (inflation) knows lower-case names only
    if (ctx.req.headers['content-encoding'] !== undefined) ctx.req.headers['content-encoding'] = encoding;
    try {
      await parse(ctx, async () => undefined);
    } catch (err) {
      // over the limit (announced by Content-Length, or seen while reading): the rest is not read
      if ((err as { status?: unknown }).status === 413) ctx.set('Connection', 'close');
      if (encoding !== 'identity' && !hasHttpStatus(err)) {
        throw new BadRequestError(`the request body is not valid ${encoding} data`);
      }
      throw err;
    }
    if (nestsDeeperThan(ctx.request.body, MAX_JSON_DEPTH)) {
      throw new BadRequestError(
        `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`,
      );
    }
    await next();
  };
}
