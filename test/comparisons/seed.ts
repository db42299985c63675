/**
 * Comparison fixtures as rows only (no upload, so no workflow runs for them and only the test changes their
 * states): a company file with two or more CSV versions, their objects stored in MinIO, each version's report
 * row, and a requested comparison of the first two versions.
 */
import { randomUUID } from 'node:crypto';
import { actingStatement } from '../../db/unitOfWork';
import { runComparison } from '../../domain/comparisons/run';
import { runBuild } from '../../domain/reports/build';
import { testEnv } from '../helpers/env';
import type { Team } from '../helpers/factories';
import { insertCompanyFile } from '../helpers/graphql';

export interface SeededComparison {
  companyId: string;
  fileId: string;
  versionIds: string[];
  comparisonId: string;
  /** runs the comparison as the worker does (the application role, acting for the company) */
  run: (storage?: ReturnType<typeof testEnv>['storage']) => ReturnType<typeof runComparison>;
}

/**
 * `texts[i]` is version i + 1's CSV. `reports`: `none` (no report row), a status for every version's row, or
 * `built` (built here by the reports engine, so the comparison takes their types).
 */
export async function seedComparison(
  team: Team,
  texts: string[],
  options: {
    reports?: 'none' | 'built' | 'queued' | 'building' | 'ready' | 'failed';
    keyColumns?: string[];
  } = {},
): Promise<SeededComparison> {
  const { knex, appKnex, storage, config } = testEnv();
  const companyId = team.company.id;
  const reports = options.reports ?? 'none';
  const { fileId, datasetId } = await insertCompanyFile(team, 1, texts.length);
  const versionIds: string[] = [];
  for (const [i, text] of texts.entries()) {
    const id = randomUUID();
    const objectKey = storage.key('files', companyId, fileId, id);
    await storage.client.putObject(storage.bucket, objectKey, Buffer.from(text));
    await knex('fileVersions').insert({
      id,
      companyId,
      fileId,
      datasetId,
      version: i + 1,
      originalName: 'f1.csv',
      format: 'csv',
      contentType: 'text/csv',
      delimiter: ',',
      sizeBytes: Buffer.byteLength(text),
      objectKey,
      uploadedByPersonId: team.admin.id,
    });
    if (reports !== 'none') {
      await knex('reports').insert({
        id: randomUUID(),
        companyId,
        fileId,
        fileVersionId: id,
        version: i + 1,
        status: reports === 'built' ? 'queued' : reports,
        build: 1,
      });
    }
    if (reports === 'built') {
      await actingStatement({ companyId }, () =>
        runBuild(
          { knex: appKnex, storage, config },
          { companyId, fileId, fileVersionId: id, version: i + 1, build: 1 },
        ),
      );
    }
    versionIds.push(id);
  }
  const comparisonId = randomUUID();
  await knex('comparisons').insert({
    id: comparisonId,
    companyId,
    fileId,
    baseVersionId: versionIds[0],
    targetVersionId: versionIds[1],
    baseVersion: 1,
    targetVersion: 2,
    automatic: false,
    keyColumns: options.keyColumns ? JSON.stringify(options.keyColumns) : null,
    status: 'queued',
  });
  const run = (withStorage = storage) =>
    actingStatement({ companyId }, () =>
      runComparison({ knex: appKnex, storage: withStorage, config }, { companyId, comparisonId }),
    );
  return { companyId, fileId, versionIds, comparisonId, run };
}
