import { UniqueViolationError } from 'objection';

/** PostgreSQL error fields, whether the error came through objection (wrapped) or straight from knex/pg. */
interface PgLike {
  code?: string;
  constraint?: string;
  nativeError?: { code?: string; constraint?: string };
}

export function pgErrorCode(err: unknown): string | undefined {
  const e = err as PgLike | undefined;
  return e?.nativeError?.code ?? e?.code;
}

/** A unique-constraint violation, optionally of the named constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as PgLike | undefined;
  const unique = err instanceof UniqueViolationError || pgErrorCode(err) === '23505';
  if (!unique || !constraint) return unique;
  return (e?.constraint ?? e?.nativeError?.constraint) === constraint;
}
