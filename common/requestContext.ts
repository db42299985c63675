/**
 * What the service knows of the request being served, for records written deep below the adapter without
 * threading it through every call: the audit log's correlation id and client address (domain/audit/record.ts).
 * Set by the API's clientAddress middleware for the rest of the request; empty in the worker.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestContext {
  correlationId?: string;
  clientAddress?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (the rest of a request) with `context` as the current request. */
export function withRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/**
 * The records of the rest of this request carry no client address: a demo visitor's (every demo visitor reads the
 * demo company's audit log, so an address there would show each visitor the others' — README "Demo").
 */
export function withholdClientAddress(): void {
  const context = storage.getStore();
  if (context) context.clientAddress = undefined;
}

/** The request being served in this asynchronous scope, if any. */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}
