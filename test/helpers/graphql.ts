/** GraphQL through HTTP for the tests: the request, the data of a query that must succeed, SQL counting. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { currentRequest } from '../../common/requestContext';
import { testEnv } from './env';
import type { Team } from './factories';
import { call, type HttpResponse } from './http';

export function gql(
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<HttpResponse> {
  return call('POST', '/graphql', { token, json: { query, variables } });
}

/** The data of a query that must succeed without errors. */
export async function data(token: string, query: string, variables?: Record<string, unknown>) {
  const res = await gql(token, query, variables);
  expect(res.status, res.text).to.equal(200);
  expect(res.body.errors, res.text).to.equal(undefined);
  return res.body.data;
}

const counting = new AsyncLocalStorage<true>();

/**
 * Runs `fn` and counts the SQL statements the API's database role sent meanwhile for it: those `fn` sent
 * itself, and those sent while the API served a request (the request's context is set:
 * common/requestContext.ts). The workers of this process share that role's pool: their statements (an earlier
 * test's report build or comparison finishing, the outbox dispatcher) are neither, and are not counted.
 */
export async function countAppQueries<T>(fn: () => Promise<T>): Promise<{ count: number; result: T }> {
  const { appKnex } = testEnv();
  let count = 0;
  const onQuery = () => {
    if (counting.getStore() || currentRequest()) count += 1;
  };
  appKnex.on('query', onQuery);
  try {
    const result = await counting.run(true, fn);
    return { count, result };
  } finally {
    appKnex.off('query', onQuery);
  }
}

/** Inserts a company-wide file named `f${i}.csv` uploaded by the team's admin, and its dataset, directly. */
export async function insertCompanyFile(
  team: Team,
  i: number,
  currentVersion: number,
): Promise<{ fileId: string; datasetId: string }> {
  const { knex } = testEnv();
  const fileId = randomUUID();
  const datasetId = randomUUID();
  await knex('files').insert({
    id: fileId,
    companyId: team.company.id,
    datasetId,
    originalName: `f${i}.csv`,
    uploadedByPersonId: team.admin.id,
    visibility: 'company',
    currentVersion,
  });
  await knex('datasets').insert({ id: datasetId, companyId: team.company.id, fileId });
  return { fileId, datasetId };
}
