/**
 * GraphQL over HTTP compliance: the audits graphql-http ships (graphql-http/lib/audits serverAudits), run
 * against the real endpoint with a signed-in session (the endpoint is session only), every one passing
 * (README "GraphQL" lists none as failing). And the committed schema file matches the schema.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { serverAudits } from 'graphql-http';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { randomClientAddress } from '../helpers/http';
import { printedSchema, SCHEMA_FILE } from '../../scripts/graphql-schema';

describe('GraphQL over HTTP', function () {
  this.timeout(60_000);

  it('passes every audit of graphql-http against the endpoint', async () => {
    const team = await createTeam();
    const fetchFn = (input: string | URL, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${team.adminToken}`);
      headers.set('x-forwarded-for', randomClientAddress());
      return fetch(input, { ...init, headers });
    };
    const audits = serverAudits({ url: `${testEnv().baseUrl}/graphql`, fetchFn });
    expect(audits.length).to.be.greaterThan(30);
    const results = await Promise.all(audits.map((a) => a.fn()));
    const failed: string[] = [];
    for (const r of results) if (r.status !== 'ok') failed.push(`${r.id} ${r.name}: ${r.status} ${r.reason}`);
    expect(failed).to.deep.equal([]);
  });

  it('keeps api/graphql/schema.graphql in sync with the schema (npm run graphql:schema)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).to.equal(printedSchema());
  });
});
