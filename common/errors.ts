/**
 * The few typed errors the service throws. One middleware (api/middlewares/errors.ts) turns each into
 * the spec's error body; anything else becomes a generic 500.
 */
export class AppError extends Error {
  constructor(
    public readonly statusCode: number,
    message: string | string[],
    public readonly headers: Record<string, string> = {},
    /** Extra fields added to the error body beside the four the spec names (e.g. /ready's checks). */
    public readonly details: Record<string, unknown> = {},
  ) {
    super(Array.isArray(message) ? message.join('; ') : message);
    this.name = new.target.name;
    this.messages = message;
  }
  readonly messages: string | string[];
}

/**
 * A refusal by the domain's rules that names no HTTP status (a quota used up, no plan chosen): the API's
 * error mapper (api/middlewares/errors.ts) picks the status from the class; other adapters pick their own.
 */
export class DomainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(message: string | string[]) {
    super(400, message);
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'authentication required') {
    super(401, message);
  }
}
export class ForbiddenError extends AppError {
  constructor(message = 'forbidden') {
    super(403, message);
  }
}
export class NotFoundError extends AppError {
  constructor(message = 'not found') {
    super(404, message);
  }
}
export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message);
  }
}
export class PaymentRequiredError extends AppError {
  constructor(message: string) {
    super(402, message);
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super(413, message);
  }
}
export class UnprocessableError extends AppError {
  constructor(message: string) {
    super(422, message);
  }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super(415, message);
  }
}
export class TooManyRequestsError extends AppError {
  /** `headers`: more headers of the answer, e.g. the X-RateLimit-* of the limit that refused it */
  constructor(message: string, retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, message, { ...headers, 'Retry-After': String(retryAfterSeconds) });
  }
}
export class ServiceUnavailableError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(503, message, {}, details);
  }
}
