/** GraphQL through HTTP for the tests: the request, the data of a query that must succeed, SQL counting. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
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

/** Runs `fn` and counts the SQL statements the API's database role sent meanwhile. */
export async function countAppQueries<T>(fn: () => Promise<T>): Promise<{ count: number; result: T }> {
  const { appKnex } = testEnv();
  let count = 0;
  const onQuery = () => {
    count += 1;
  };
  appKnex.on('query', onQuery);
  try {
    const result = await fn();
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
