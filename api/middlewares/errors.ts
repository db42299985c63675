import type { Next } from 'koa';
import {
  CheckViolationError,
  DataError,
  ForeignKeyViolationError,
  NotFoundError as ObjectionNotFoundError,
  NotNullViolationError,
  UniqueViolationError,
  ValidationError as ObjectionValidationError,
} from 'objection';
import { AppError, type DomainError } from '../../common/errors';
import { pgErrorCode } from '../../db/errors';
import { PlanLimitError, PlanRequiredError, QuotaExceededError } from '../../domain/plans/errors';
import type { AppContext } from '../context';

interface Mapped {
  status: number;
  message: string | string[];
  headers?: Record<string, string>;
  details?: Record<string, unknown>;
}

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
  limit?: number;
}

/** The HTTP status of each typed domain refusal (domain errors name no status themselves). */
const DOMAIN_STATUS: ReadonlyArray<[new (...args: never[]) => DomainError, number]> = [
  [QuotaExceededError, 402],
  [PlanRequiredError, 402],
  [PlanLimitError, 409],
];

/** Maps any thrown value to a status and a message safe to show; unknown errors become a generic 500. */
export function mapError(err: unknown): Mapped {
  if (err instanceof AppError)
    return { status: err.statusCode, message: err.messages, headers: err.headers, details: err.details };
  for (const [type, status] of DOMAIN_STATUS) {
    if (err instanceof type) return { status, message: err.message };
  }
  if (err instanceof UniqueViolationError) return { status: 409, message: 'already exists' };
  if (err instanceof ForeignKeyViolationError)
    return { status: 409, message: 'refers to something that does not exist' };
  if (err instanceof NotNullViolationError) return { status: 400, message: `${err.column} is required` };
  if (err instanceof CheckViolationError || err instanceof DataError)
    return { status: 400, message: 'invalid value' };
  if (err instanceof ObjectionValidationError) return { status: 400, message: err.message };
  if (err instanceof ObjectionNotFoundError) return { status: 404, message: 'not found' };
  // the same classes for errors of raw knex queries, which objection does not wrap
  switch (pgErrorCode(err)) {
    case '23505':
      return { status: 409, message: 'already exists' };
    case '23503':
      return { status: 409, message: 'refers to something that does not exist' };
    case '23502':
    case '23514':
    case '22P02':
    case '22001':
    case '22003':
      return { status: 400, message: 'invalid value' };
  }
  const http = err as HttpLikeError;
  const status = http?.status ?? http?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // errors raised by koa, koa-body and @koa/router
    // the strict parser refuses a body that does not begin as an object or an array (null, "text", 42, a word)
    if (status === 400 && /only supports object and array/.test(http.message ?? '')) {
      return { status: 400, message: 'the request body must be a JSON object' };
    }
    if (http.type === 'entity.parse.failed' || (status === 400 && /JSON/i.test(http.message ?? ''))) {
      return { status: 400, message: 'malformed JSON body' };
    }
    if (status === 413)
      return {
        status: 413,
        message: `request body too large (limit ${http.limit ?? ''} bytes)`.replace(' ( bytes)', ''),
      };
    if (status === 415) return { status: 415, message: 'unsupported content type: send application/json' };
    if (status === 405) return { status: 405, message: http.message ?? 'method not allowed' };
    return { status, message: http.expose && http.message ? http.message : 'bad request' };
  }
  return { status: 500, message: 'internal server error' };
}

export function writeErrorBody(
  ctx: AppContext,
  status: number,
  message: string | string[],
  details: Record<string, unknown> = {},
): void {
  ctx.status = status;
  ctx.body = {
    ...details,
    statusCode: status,
    message,
    correlationId: ctx.state.correlationId,
    timestamp: new Date().toISOString(),
  };
}

/** One place that writes the spec's error body for every failure, including unknown routes. */
export function errors() {
  return async (ctx: AppContext, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        writeErrorBody(ctx, 404, `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const mapped = mapError(err);
      if (mapped.status >= 500) {
        // the request's logger carries the correlation id already
        ctx.state.log.error({ err }, 'request failed');
      }
      for (const [name, value] of Object.entries(mapped.headers ?? {})) ctx.set(name, value);
      writeErrorBody(ctx, mapped.status, mapped.message, mapped.details);
    }
  };
}
