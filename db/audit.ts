// TEMPORARY (issue 11): the audit writer moved to domain/audit/record.ts. This re-export keeps the files
// and webhooks code that is being moved on other branches building; it goes (with its entry in
// eslint.config.mjs's temporary ignores) once they import domain/audit.
export * from '../domain/audit/record';
