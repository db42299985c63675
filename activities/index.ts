import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { createStorage, type Storage } from '../common/storage';
import { createFileActivities } from './files';
import { createOutboxActivities, type FanOut } from './outbox';
import { createReportActivities } from './reports';

export interface ActivityDeps {
  config: Config;
  knex: Knex;
  logger: Logger;
  fanOut?: FanOut;
  /** MinIO; built from the configuration when not given */
  storage?: Storage;
}

/** Every activity the worker registers, built from its clients so tests can pass their own. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createOutboxActivities({
      knex: deps.knex,
      logger: deps.logger,
      batchSize: deps.config.outbox.batchSize,
      idleWaitMs: deps.config.outbox.idleWaitMs,
      fanOut: deps.fanOut,
    }),
    ...createReportActivities({ knex: deps.knex }),
    ...createFileActivities({ knex: deps.knex, storage: deps.storage ?? createStorage(deps.config) }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
