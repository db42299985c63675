import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout; every request log line carries the correlation id. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.refreshToken', '*.secret'],
      censor: '[redacted]',
    },
  });
}
