/**
 * The error an analysis activity lets out when it fails for a reason other than the file itself (a retryable
 * failure): Temporal records it (each attempt's failure, at the end the workflow's history) and the worker's
 * SDK log line prints it. Errors met on the way may quote the file — DuckDB's CSV errors print the offending
 * line and its conversion errors the value, PostgreSQL's the JSON text around a value it refuses (`where`) — so
 * what goes out names only the kind of error: its class, DuckDB's error category, a system call, a system,
 * SQLSTATE or S3 code, and the stack frames. Never the original message, its cause or its other fields.
 */
export function withoutFileContent(err: unknown, what: string): Error {
  const e = (typeof err === 'object' && err !== null ? err : {}) as Record<string, unknown>;
  const token = (value: unknown, pattern: RegExp) =>
    typeof value === 'string' && pattern.test(value) ? value : undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  const facts = [
    token(e.name, /^[A-Za-z][A-Za-z0-9]{0,60}$/),
    // DuckDB's messages start with their category: `Invalid Input Error: CSV Error on Line: 3 …`
    /^([A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*){0,4} Error):/.exec(message)?.[1],
    token(e.syscall, /^[a-z]{1,20}$/),
    token(e.code, /^[A-Za-z0-9_]{1,40}$/),
  ].filter((fact): fact is string => fact !== undefined);
  const out = new Error(`${what} failed (${facts.length > 0 ? facts.join(', ') : 'an unknown error'})`);
  // the original frames (code locations only), when its stack is its message followed by them
  const stack = typeof e.stack === 'string' ? e.stack : '';
  const head = `${String(e.name)}: ${message}\n`;
  if (stack.startsWith(head)) out.stack = `Error: ${out.message}\n${stack.slice(head.length)}`;
  return out;
}
