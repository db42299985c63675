import type Koa from 'koa';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import type { Storage } from '../common/storage';

/** Everything the API needs from outside; app.ts builds the Koa app from this and never listens. */
export interface AppDeps {
  config: Config;
  logger: Logger;
  knex: Knex;
  temporal: Client;
  storage: Storage;
}

export interface AppState {
  correlationId: string;
  log: Logger;
}

export type AppContext = Koa.ParameterizedContext<AppState> & { deps: AppDeps };
