import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { startMissingReports } from '../domain/files/reportStarts';
import { sweepOrphanObjects, type SweepResult } from '../domain/files/sweep';
import type { Storage } from '../common/storage';

export interface FileActivityDeps {
  knex: Knex;
  storage: Storage;
  /** starts report workflows that did not start after an upload; without it none are started */
  temporal?: Client;
  taskQueue: string;
}

export function createFileActivities(deps: FileActivityDeps) {
  return {
    /** For the retention schedule: removes objects and multipart uploads left by uploads that never committed. */
    async sweepOrphanObjects(input: { olderThanMs?: number } = {}): Promise<SweepResult> {
      return sweepOrphanObjects(deps.knex, deps.storage, input);
    },
    /** For the same schedule: report workflows of versions without a report row a few minutes after upload. */
    async startMissingReports(
      input: { olderThanMs?: number } = {},
    ): Promise<{ reportsStarted: number; reportsRunning: number }> {
      if (!deps.temporal) return { reportsStarted: 0, reportsRunning: 0 };
      return startMissingReports(deps.knex, deps.temporal, deps.taskQueue, input);
    },
  };
}

export type FileActivities = ReturnType<typeof createFileActivities>;
