/** Request counts for analytics (domain/analytics/requests.ts): counted in memory, written in batches. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  countRequest,
  flushRequestCounts,
  REQUEST_COUNT_FLUSH_MS,
  SESSION_KEY,
} from '../../../domain/analytics/requests';
import { currentRequest, withRequestContext } from '../../../common/requestContext';
import { testEnv } from '../../helpers/env';
import { createTeam } from '../../helpers/factories';
import { eventually } from '../../helpers/temporal';

async function countsOf(companyId: string): Promise<Record<string, number>> {
  const rows = await testEnv()
    .knex('analyticsRequests')
    .where({ companyId })
    .select('personId', 'apiKeyId', 'requests');
  return Object.fromEntries(rows.map((r) => [`${r.personId}/${r.apiKeyId}`, Number(r.requests)]));
}

describe('analytics: request counts', function () {
  this.timeout(30_000);

  it('counts in memory and writes one row per person and key, added to on each write', async () => {
    const { appKnex } = testEnv();
    const team = await createTeam();
    const other = await createTeam();
    const cid = team.company.id;
    const keyId = randomUUID();
    const admin = team.admin.id;
    for (let i = 0; i < 5; i++) countRequest(appKnex, { companyId: cid, personId: admin });
    for (let i = 0; i < 2; i++) countRequest(appKnex, { companyId: cid, personId: admin, apiKeyId: keyId });
    countRequest(appKnex, { companyId: other.company.id, personId: other.admin.id });
    expect(await countsOf(cid)).to.deep.equal({}); // nothing written per request
    await flushRequestCounts(appKnex);
    expect(await countsOf(cid)).to.deep.equal({ [`${admin}/${SESSION_KEY}`]: 5, [`${admin}/${keyId}`]: 2 });
    expect(await countsOf(other.company.id)).to.deep.equal({ [`${other.admin.id}/${SESSION_KEY}`]: 1 });
    for (let i = 0; i < 3; i++) countRequest(appKnex, { companyId: cid, personId: admin });
    await flushRequestCounts(appKnex);
    expect((await countsOf(cid))[`${admin}/${SESSION_KEY}`]).to.equal(8);
  });

  it('writes by itself within the interval, without a flush, outside the request that counted first', async () => {
    const { appKnex } = testEnv();
    const team = await createTeam();
    await flushRequestCounts(appKnex); // no timer running: the count below starts one
    const writes: Array<string | undefined> = [];
    const onQuery = (q: { sql: string }) => {
      if (q.sql.includes('analytics_requests')) writes.push(currentRequest()?.correlationId);
    };
    appKnex.on('query', onQuery);
    try {
      withRequestContext({ correlationId: 'counted-first' }, () =>
        countRequest(appKnex, { companyId: team.company.id, personId: team.admin.id }),
      );
      await eventually(
        async () =>
          (await countsOf(team.company.id))[`${team.admin.id}/${SESSION_KEY}`] === 1 ? true : undefined,
        { what: 'the timed write', timeoutMs: REQUEST_COUNT_FLUSH_MS * 5 },
      );
    } finally {
      appKnex.off('query', onQuery);
    }
    expect(writes).to.deep.equal([undefined]);
  });

  it('keeps the counts of a failed write for the next one (a few times at most)', async () => {
    const { appKnex, knex } = testEnv();
    const errors: unknown[] = [];
    // a company that does not exist yet: its foreign key refuses the write, the counts stay in memory
    const companyId = randomUUID();
    const personId = randomUUID();
    countRequest(appKnex, { companyId, personId }, (err) => errors.push(err));
    countRequest(appKnex, { companyId, personId }, (err) => errors.push(err));
    await flushRequestCounts(appKnex);
    expect(errors).to.have.length.at.least(1);
    expect(await countsOf(companyId)).to.deep.equal({});
    await knex('companies').insert({ id: companyId, name: 'Later Co' });
    countRequest(appKnex, { companyId, personId });
    await flushRequestCounts(appKnex);
    expect(await countsOf(companyId)).to.deep.equal({ [`${personId}/${SESSION_KEY}`]: 3 });

    // counts whose writes keep failing are dropped after three tries, not retried for ever
    const gone = randomUUID();
    countRequest(appKnex, { companyId: gone, personId }, () => undefined);
    for (let i = 0; i < 3; i++) await flushRequestCounts(appKnex);
    await knex('companies').insert({ id: gone, name: 'Too Late Co' });
    await flushRequestCounts(appKnex);
    expect(await countsOf(gone)).to.deep.equal({});
  });
});
