import type { Knex } from 'knex';
import { sweepOrphanObjects, type SweepResult } from '../common/files/sweep';
import type { Storage } from '../common/storage';

export interface FileActivityDeps {
  knex: Knex;
  storage: Storage;
}

export function createFileActivities(deps: FileActivityDeps) {
  return {
    /** For the retention schedule: removes objects and multipart uploads left by uploads that never committed. */
    async sweepOrphanObjects(input: { olderThanMs?: number } = {}): Promise<SweepResult> {
      return sweepOrphanObjects(deps.knex, deps.storage, input);
    },
  };
}

export type FileActivities = ReturnType<typeof createFileActivities>;
