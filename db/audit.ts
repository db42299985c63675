// TEMPORARY (issue 11): the audit writer moved to domain/audit/record.ts. This re-export keeps the webhooks
// code that is being moved on its branch building; it goes (with its entry in eslint.config.mjs's temporary
// exceptions) once that code imports domain/audit.
export * from '../domain/audit/record';
