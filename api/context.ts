import type Koa from 'koa';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import type { Storage } from '../common/storage';
import type { Mailer } from '../common/mailer';
import type { PlanName } from '../domain/plans/plans';
import type { Role, Scope } from '../domain/identity/scopes';
import type { RouteSpec } from './routing';

/** Everything the API needs from outside; app.ts builds the Koa app from this and never listens. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  knex: Knex;
  temporal: Client;
  storage: Storage;
  mailer: Mailer;
}

/** Who is calling, read afresh from the database on every request (api/middlewares/authenticate.ts). */
export interface Principal {
  kind: 'session' | 'key';
  personId: string;
  companyId: string;
  role: Role;
  companyPlan: PlanName | null;
  /** a read-only demo session: every write answers 403 */
  demo: boolean;
  /** session: the session (refresh-token family) id */
  sessionId?: string;
  /** key: the API key id and the scopes it holds */
  apiKeyId?: string;
  scopes?: readonly Scope[];
}

export interface AppState {
  correlationId: string;
  log: Logger;
  /** the client's address (socket, or X-Forwarded-For through TRUST_PROXY_HOPS trusted hops) */
  clientIp: string;
  /** set for every route that is not public */
  auth?: Principal;
  /**
   * A streamed body's fingerprint, set by its handler once the body is read (uploads: form fields, file
   * name and content sha256), so Idempotency-Key can tell a retry from another request.
   */
  bodyFingerprint?: string;
  /**
   * counts the request against its route's bucket, once the caller is authorized (a signed-in route's bucket:
   * api/middlewares/rateLimit.ts)
   */
  countBucket?: () => Promise<void>;
}

export type AppContext = Koa.ParameterizedContext<AppState> & {
  deps: AppDeps;
  /** every route this app mounted (the OpenAPI document is built from it) */
  routeTable: readonly RouteSpec[];
};
