import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import type { Storage } from '../common/storage';
import {
  billingChunks,
  finalizeChunk,
  type BillingChunk,
  type BillingChunkHook,
  type ChunkResult,
} from '../domain/billing/finalize';

export interface BillingActivityDeps {
  knex: Knex;
  storage: Storage;
  logger: Logger;
  /** tests only: called after each company of a chunk is computed, before the chunk commits */
  hook?: BillingChunkHook;
}

export function createBillingActivities(deps: BillingActivityDeps) {
  return {
    async listBillingChunks(input: { periodKey: string; chunkSize: number }): Promise<BillingChunk[]> {
      return billingChunks(deps.knex, input.periodKey, input.chunkSize);
    },
    async finalizeBillingChunk(input: {
      periodKey: string;
      afterId: string | null;
      throughId: string;
      workflowId?: string;
    }): Promise<ChunkResult> {
      return finalizeChunk(deps, { ...input, hook: deps.hook });
    },
  };
}

export type BillingActivities = ReturnType<typeof createBillingActivities>;
