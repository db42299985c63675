import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { NO_STARTS, startMissingAnalyses } from '../domain/files/reportStarts';
import { sweepOrphanObjects, type SweepResult } from '../domain/files/sweep';
import type { Storage } from '../common/storage';

export interface FileActivityDeps {
  knex: Knex;
  storage: Storage;
  /** starts report and comparison workflows that did not start after an upload; without it none are */
  temporal?: Client;
  taskQueue: string;
}

export function createFileActivities(deps: FileActivityDeps) {
  return {
    /** For the retention schedule: removes objects and multipart uploads left by uploads that never committed. */
    async sweepOrphanObjects(input: { olderThanMs?: number } = {}): Promise<SweepResult> {
      return sweepOrphanObjects(deps.knex, deps.storage, input);
    },
    /**
     * For the same schedule: the report workflows and automatic comparisons of versions without their row a
     * few minutes after upload, and rebuilds and requested comparisons still queued some minutes after.
     */
    async startMissingAnalyses(input: { olderThanMs?: number } = {}) {
      if (!deps.temporal) return { ...NO_STARTS };
      return startMissingAnalyses(deps.knex, deps.temporal, deps.taskQueue, input);
    },
  };
}

export type FileActivities = ReturnType<typeof createFileActivities>;
