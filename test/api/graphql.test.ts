/**
 * The GraphQL read API through HTTP (issue 18): keys refused before execution, a query per type, the same
 * visibility and tenant isolation as REST whatever the path, connections with REST's cursors, the
 * protections (depth, complexity, document size, page size, errors without internals) and the query count
 * of a nested query that does not grow with the number of files.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startWorker, testEnv } from '../helpers/env';
import { createApiKey, createTeam, type Team } from '../helpers/factories';
import { countAppQueries, data, gql, insertCompanyFile } from '../helpers/graphql';
import { call, expectErrorBody } from '../helpers/http';
import { uploadFile, uploadTo } from '../helpers/files';
import { eventually } from '../helpers/temporal';
import { documentNesting } from '../../api/graphql/http';

const V1 = ['id,email,qty', '1,anna.smith@example.com,5', '2,,6', '3,li.chen@example.org,7'].join('\n');
const V2 = ['id,email,qty', '1,anna.smith@example.com,5', '2,,60', '4,omar.khan@example.net,8'].join('\n');

describe('GraphQL', function () {
  this.timeout(180_000);

  describe('access', () => {
    it('refuses API keys (whatever their scopes) with 403 and the error body, before anything runs', async () => {
      const team = await createTeam();
      const key = await createApiKey(team.admin, ['files:read', 'files:write', 'audit:read', 'mcp']);
      for (const res of [
        await call('POST', '/graphql', { token: key, json: { query: '{ me { id } }' } }),
        await call('GET', '/graphql?query=%7Bme%7Bid%7D%7D', { token: key }),
        // not even a document that does not parse gets to the GraphQL layer
        await call('POST', '/graphql', { token: key, json: { query: '{' } }),
      ]) {
        expect(expectErrorBody(res, 403).message).to.equal('API keys are not accepted on this endpoint');
      }
      expectErrorBody(await call('POST', '/graphql', { json: { query: '{ me { id } }' } }), 401);
    });

    it('spends the person’s session budget and carries the rate-limit headers', async () => {
      const team = await createTeam();
      const a = await gql(team.employeeToken, '{ me { id } }');
      const b = await gql(team.employeeToken, '{ me { id } }');
      expect(a.headers.get('x-ratelimit-limit')).to.equal('300');
      expect(Number(b.headers.get('x-ratelimit-remaining'))).to.equal(
        Number(a.headers.get('x-ratelimit-remaining')) - 1,
      );
      expect(a.headers.get('x-request-id')).to.be.a('string');
    });

    it('allows introspection to signed-in callers', async () => {
      const team = await createTeam();
      const d = await data(team.employeeToken, '{ __schema { queryType { name } } }');
      expect(d.__schema.queryType.name).to.equal('Query');
      expectErrorBody(
        await call('POST', '/graphql', { json: { query: '{ __schema { queryType { name } } }' } }),
        401,
      );
    });
  });

  describe('protections', () => {
    let team: Team;
    before(async () => {
      team = await createTeam();
    });

    it('refuses a query deeper than the limit before running it', async () => {
      const res = await gql(
        team.adminToken,
        `{ files { nodes { versions { nodes { comparison { target { file { versions { nodes { file {
           latestVersion { report { version { id } } } } } } } } } } } } } }`,
      );
      expect(res.status).to.equal(200);
      expect(res.body.data).to.equal(undefined);
      expect(res.body.errors[0].message).to.match(/exceeds maximum operation depth of 10/);
    });

    it('refuses a query over the complexity limit before running it (page sizes multiply)', async () => {
      const res = await gql(
        team.adminToken,
        '{ files(first: 100) { nodes { id versions(first: 100) { nodes { id report { status } } } } } }',
      );
      expect(res.status).to.equal(200);
      expect(res.body.data).to.equal(undefined);
      expect(res.body.errors[0].message).to.match(/complexity is \d+: at most 10000/);
      // a connection asking for a negative page counts as one of at least a node: it cannot cancel its
      // siblings' cost (they would run before its own error ends the query)
      const cancelled = await gql(
        team.adminToken,
        `{ n: notifications(first: -1000000) { nodes { id } }
           files(first: 100) { nodes { id versions(first: 100) { nodes { id report { status } } } } } }`,
      );
      expect(cancelled.body.data).to.equal(undefined);
      expect(cancelled.body.errors[0].message).to.match(/complexity is \d+: at most 10000/);
      // the same shape with smaller pages runs
      await data(
        team.adminToken,
        '{ files(first: 20) { nodes { id versions(first: 10) { nodes { id report { status } } } } } }',
      );
    });

    it('refuses a document nested thousands deep (within 10,000 characters) with an error, not a 500', async () => {
      const nested = `${'{a'.repeat(3000)}${'}'.repeat(3000)}`;
      expect(nested.length).to.be.at.most(10_000);
      for (const accept of ['application/json', 'application/graphql-response+json']) {
        const res = await call('POST', '/graphql', {
          token: team.adminToken,
          json: { query: nested },
          headers: { accept },
        });
        expect(res.status, res.text).to.equal(accept === 'application/json' ? 200 : 400);
        expect(res.body.errors[0].message).to.equal(
          'the document nests deeper than 64 levels of braces, brackets and parentheses',
        );
      }
      // brackets inside strings, block strings and comments do not count
      expect(documentNesting('{ a(x: "{{{[[[(((") # {{{{\n b { c } }')).to.equal(2);
      expect(documentNesting('{ a(x: """{{ \\""" {{""") }')).to.equal(2);
      expect(documentNesting('{ a(x: "\\"{{") }')).to.equal(2);
    });

    it('refuses documents over 10,000 characters, and answers errors in GraphQL’s errors array', async () => {
      const long = `{ me { ${'id '.repeat(5000)} } }`;
      const res = await gql(team.adminToken, long);
      expect(res.body.errors[0].message).to.match(/at most 10000/);
      const bad = await call('POST', '/graphql', {
        token: team.adminToken,
        json: { query: '{ nope }' },
        headers: { accept: 'application/graphql-response+json' },
      });
      expect(bad.status).to.equal(400);
      expect(bad.body.errors[0].message).to.match(/Cannot query field "nope"/);
    });

    it('accepts page sizes 1 to 100 only, and refuses forged cursors', async () => {
      for (const first of [0, 101]) {
        const res = await gql(team.adminToken, `{ files(first: ${first}) { nodes { id } } }`);
        expect(res.body.errors[0].message).to.equal('first must be from 1 to 100');
        expect(res.body.errors[0].extensions).to.deep.equal({ code: 'BAD_REQUEST', statusCode: 400 });
        expect(res.body.data).to.equal(null);
      }
      const res = await gql(team.adminToken, '{ files(after: "forged") { nodes { id } } }');
      expect(res.body.errors[0].message).to.equal('after is not a valid cursor for this list');
    });

    it('answers refusals made before GraphQL with the error body (406, missing query, body not JSON)', async () => {
      const accept = await call('POST', '/graphql', {
        token: team.adminToken,
        json: { query: '{ me { id } }' },
        headers: { accept: 'text/html' },
      });
      expect(expectErrorBody(accept, 406).message).to.match(/not acceptable/);
      expect(
        expectErrorBody(await call('GET', '/graphql', { token: team.adminToken }), 400).message,
      ).to.match(/query/);
      expectErrorBody(
        await call('POST', '/graphql', {
          token: team.adminToken,
          raw: '{"query": ',
          headers: { 'content-type': 'application/json' },
        }),
        400,
      );
    });

    it('has no mutations, and answers GET queries', async () => {
      const res = await gql(team.adminToken, 'mutation { x }');
      expect(res.body.errors[0].message).to.match(/Schema is not configured to execute mutation/);
      const get = await call('GET', `/graphql?query=${encodeURIComponent('{ company { name } }')}`, {
        token: team.adminToken,
      });
      expect(get.status, get.text).to.equal(200);
      expect(get.body.data.company.name).to.be.a('string');
      expectErrorBody(await call('GET', `/graphql?query=x&unknown=1`, { token: team.adminToken }), 400);
    });

    it('refuses a mutation sent with GET with 405, the error body and Allow: POST', async () => {
      for (const accept of ['application/graphql-response+json', 'application/json']) {
        const res = await call('GET', `/graphql?query=${encodeURIComponent('mutation { x }')}`, {
          token: team.adminToken,
          headers: { accept },
        });
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(expectErrorBody(res, 405).message).to.equal(
          'a mutation cannot be sent with GET: send it with POST',
        );
        expect(res.headers.get('allow')).to.equal('POST');
      }
    });
  });

  describe('with files, reports and comparisons (worker running)', () => {
    let stop: (() => Promise<void>) | undefined;
    let a: Team;
    let b: Team;
    let companyFile: string;
    let adminPrivate: string;
    let employeeFile: string;
    let privateComparison: string;
    let companyComparison: string;
    let otherFile: string;
    let otherComparison: string;

    const waitComparison = (token: string, fileId: string) =>
      eventually(
        async () => {
          const c = await call('GET', `/files/${fileId}/versions/2/comparison`, { token });
          return c.body?.status === 'ready' ? (c.body.id as string) : undefined;
        },
        { what: 'comparison', timeoutMs: 90_000 },
      );
    const waitReport = (token: string, fileId: string, version: number) =>
      eventually(
        async () => {
          const r = await call('GET', `/files/${fileId}/versions/${version}/report`, { token });
          return r.body?.status === 'ready' ? r.body : undefined;
        },
        { what: 'report', timeoutMs: 90_000 },
      );
    async function twoVersions(team: Team, token: string, visibility: string) {
      const up = await uploadFile(V1, { token, name: 'people.csv', visibility });
      expect(up.status, up.text).to.equal(201);
      const v2 = await uploadTo(`/files/${up.body.id}/versions`, V2, { token, name: 'people.csv' });
      expect(v2.status, v2.text).to.equal(201);
      void team;
      return up.body.id as string;
    }

    before(async () => {
      const worker = await startWorker();
      stop = () => worker.stop();
      a = await createTeam({ plan: 'premium' });
      b = await createTeam({ plan: 'premium' });
      const rule = await call('POST', '/rules', {
        token: a.adminToken,
        json: { name: 'email present', kind: 'not_null', column: 'email' },
      });
      expect(rule.status, rule.text).to.equal(201);
      companyFile = await twoVersions(a, a.adminToken, 'company');
      adminPrivate = await twoVersions(a, a.adminToken, 'private');
      const e = await uploadFile(V1, { token: a.employeeToken, name: 'mine.csv' });
      employeeFile = e.body.id as string;
      otherFile = await twoVersions(b, b.adminToken, 'company');
      companyComparison = await waitComparison(a.adminToken, companyFile);
      privateComparison = await waitComparison(a.adminToken, adminPrivate);
      otherComparison = await waitComparison(b.adminToken, otherFile);
      await waitReport(a.adminToken, companyFile, 1);
      await waitReport(a.adminToken, companyFile, 2);
      await waitReport(a.employeeToken, employeeFile, 1);
    });
    after(async () => {
      await stop?.();
    });

    it('answers a query per type: me, company, plan, people, files, versions, reports, quality, sensitive data, comparisons', async () => {
      const d = await data(
        a.adminToken,
        `query($file: ID!, $cmp: ID!) {
          me { id name role email status }
          company { id name plan status }
          plan { plan filesUsed filesLimit periodKey limits }
          people(first: 10) { nodes { id name role email } pageInfo { hasNextPage endCursor } }
          file(id: $file) {
            id originalName visibility currentVersion uploadedBy { id role }
            versions(first: 5) {
              nodes {
                version sizeBytes rowCount
                report { status build quality { score failedErrorRules rules { name status failedUnits } } profile }
                sensitiveData { columns { name kinds } }
                comparison { id status changeCount }
              }
            }
            latestVersion { version }
            version(number: 1) { version }
          }
          comparison(id: $cmp) { id automatic status file { id } base { version } target { version } summary }
        }`,
        { file: companyFile, cmp: companyComparison },
      );
      expect(d.me).to.deep.include({ id: a.admin.id, role: 'admin', email: a.admin.email, status: 'active' });
      expect(d.company).to.deep.include({ id: a.company.id, plan: 'premium', status: 'active' });
      expect(d.plan).to.deep.include({ plan: 'premium', filesUsed: 5 }); // uploads of files and versions
      expect(d.people.nodes.map((p: { id: string }) => p.id).sort()).to.deep.equal(
        [a.admin.id, a.employee.id].sort(),
      );
      expect(d.people.pageInfo).to.deep.equal({ hasNextPage: false, endCursor: null });
      expect(d.file).to.deep.include({ id: companyFile, visibility: 'company', currentVersion: 2 });
      expect(d.file.uploadedBy).to.deep.equal({ id: a.admin.id, role: 'admin' });
      expect(d.file.latestVersion).to.deep.equal({ version: 2 });
      expect(d.file.version).to.deep.equal({ version: 1 });
      const [v2, v1] = d.file.versions.nodes;
      expect(v2.version).to.equal(2);
      expect(v1.sizeBytes).to.equal(Buffer.byteLength(V1));
      expect(v1.report.status).to.equal('ready');
      expect(v1.report.quality.failedErrorRules).to.equal(1);
      expect(v1.report.quality.rules[0]).to.deep.include({
        name: 'email present',
        status: 'failed',
        failedUnits: 1,
      });
      expect(v1.report.profile).to.be.an('object');
      expect(v1.sensitiveData.columns[0]).to.deep.include({ name: 'email' });
      expect(v1.comparison).to.equal(null);
      expect(v2.comparison).to.deep.include({ id: companyComparison, status: 'ready' });
      expect(v2.comparison.changeCount).to.be.greaterThan(0);
      expect(d.comparison).to.deep.include({ id: companyComparison, automatic: true, status: 'ready' });
      expect(d.comparison.base).to.deep.equal({ version: 1 });
      expect(d.comparison.target).to.deep.equal({ version: 2 });
      // the same report as REST
      const rest = await call('GET', `/files/${companyFile}/versions/1/report`, { token: a.adminToken });
      expect(v1.report.profile).to.deep.equal(rest.body.profile);
    });

    it('shows employees the files REST shows them, and people as names and roles', async () => {
      const d = await data(
        a.employeeToken,
        `{ files(first: 100) { nodes { id uploadedBy { id name role email status } } }
           people { nodes { id name role email } } me { id email } }`,
      );
      const ids = d.files.nodes.map((f: { id: string }) => f.id).sort();
      expect(ids).to.deep.equal([companyFile, employeeFile].sort());
      const rest = await call('GET', '/files?limit=100', { token: a.employeeToken });
      expect(rest.body.data.map((f: { id: string }) => f.id).sort()).to.deep.equal(ids);
      const admin = d.people.nodes.find((p: { id: string }) => p.id === a.admin.id);
      expect(admin).to.deep.equal({ id: a.admin.id, name: 'Test Person', role: 'admin', email: null });
      expect(d.me.email).to.equal(a.employee.email);
      const byAdmin = d.files.nodes.find((f: { id: string }) => f.id === companyFile);
      expect(byAdmin.uploadedBy).to.deep.equal({
        id: a.admin.id,
        name: 'Test Person',
        role: 'admin',
        email: null,
        status: null,
      });
    });

    it('never reaches a private file of another person or another company’s object, whatever the path', async () => {
      // an admin's private file: directly, through its comparison, and through the comparison's versions
      const mine = await data(
        a.employeeToken,
        `query($f: ID!, $c: ID!) {
           file(id: $f) { id }
           comparison(id: $c) { id target { report { status } } file { id } }
         }`,
        { f: adminPrivate, c: privateComparison },
      );
      expect(mine).to.deep.equal({ file: null, comparison: null });
      // the admin sees them
      const admin = await data(
        a.adminToken,
        `query($c: ID!) { comparison(id: $c) { target { report { status } } file { id } } }`,
        { c: privateComparison },
      );
      expect(admin.comparison).to.deep.equal({
        target: { report: { status: 'ready' } },
        file: { id: adminPrivate },
      });
      // another company: its company-wide file and comparison are not reachable from A, nor A's from B
      const cross = await data(
        a.adminToken,
        `query($f: ID!, $c: ID!, $p: ID!) { file(id: $f) { id } comparison(id: $c) { id } person(id: $p) { id } }`,
        { f: otherFile, c: otherComparison, p: b.admin.id },
      );
      expect(cross).to.deep.equal({ file: null, comparison: null, person: null });
      const back = await data(
        b.adminToken,
        `query($f: ID!, $c: ID!) { file(id: $f) { id } comparison(id: $c) { id file { id } } files { nodes { id } } }`,
        { f: companyFile, c: companyComparison },
      );
      expect(back.file).to.equal(null);
      expect(back.comparison).to.equal(null);
      expect(back.files.nodes.map((f: { id: string }) => f.id)).to.deep.equal([otherFile]);
      // ids that are no UUID find nothing (no database error leaks)
      const odd = await gql(a.adminToken, `{ file(id: "x'; drop") { id } comparison(id: "1") { id } }`);
      expect(odd.body).to.deep.equal({ data: { file: null, comparison: null } });
    });

    it('pages with cursors in the REST format (a GET /files cursor works as `after`)', async () => {
      const first = await data(
        a.adminToken,
        '{ files(first: 1) { nodes { id } pageInfo { hasNextPage endCursor } } }',
      );
      expect(first.files.pageInfo.hasNextPage).to.equal(true);
      const next = await data(
        a.adminToken,
        'query($c: String) { files(first: 1, after: $c) { nodes { id } } }',
        {
          c: first.files.pageInfo.endCursor,
        },
      );
      const rest = await call('GET', '/files?limit=1', { token: a.adminToken });
      expect(rest.body.data[0].id).to.equal(first.files.nodes[0].id);
      const viaRest = await data(
        a.adminToken,
        'query($c: String) { files(first: 1, after: $c) { nodes { id } } }',
        {
          c: rest.body.meta.nextCursor,
        },
      );
      expect(viaRest.files.nodes).to.deep.equal(next.files.nodes);
      const restNext = await call('GET', `/files?limit=1&cursor=${first.files.pageInfo.endCursor}`, {
        token: a.adminToken,
      });
      expect(restNext.body.data[0].id).to.equal(next.files.nodes[0].id);
      // versions page too; a cursor of another company is refused
      const v = await data(
        a.adminToken,
        'query($f: ID!) { file(id: $f) { versions(first: 1) { nodes { version } pageInfo { endCursor } } } }',
        { f: companyFile },
      );
      const v2 = await data(
        a.adminToken,
        'query($f: ID!, $c: String) { file(id: $f) { versions(first: 1, after: $c) { nodes { version } pageInfo { hasNextPage } } } }',
        { f: companyFile, c: v.file.versions.pageInfo.endCursor },
      );
      expect(v2.file.versions).to.deep.equal({ nodes: [{ version: 1 }], pageInfo: { hasNextPage: false } });
      const foreign = await gql(b.adminToken, 'query($c: String) { files(after: $c) { nodes { id } } }', {
        c: first.files.pageInfo.endCursor,
      });
      expect(foreign.body.errors[0].message).to.equal('after is not a valid cursor for this list');
    });
  });

  describe('query count', () => {
    /** N company-wide files, each with 2 versions and a ready report per version, inserted directly. */
    async function seedFiles(team: Team, n: number): Promise<void> {
      const { knex } = testEnv();
      for (let i = 0; i < n; i++) {
        const { fileId, datasetId } = await insertCompanyFile(team, i, 2);
        for (const version of [1, 2]) {
          const versionId = randomUUID();
          await knex('fileVersions').insert({
            id: versionId,
            companyId: team.company.id,
            fileId,
            datasetId,
            version,
            originalName: `f${i}.csv`,
            format: 'csv',
            contentType: 'text/csv',
            sizeBytes: 10,
            objectKey: `none/${versionId}`,
            uploadedByPersonId: team.admin.id,
          });
          await knex('reports').insert({
            id: randomUUID(),
            companyId: team.company.id,
            fileId,
            fileVersionId: versionId,
            version,
            status: 'ready',
            result: JSON.stringify({
              profile: { format: 'csv', sheets: [] },
              sections: { quality: { score: 90, rules: [] } },
            }),
          });
        }
      }
    }

    const QUERY = `{ files(first: 50) { nodes { id originalName uploadedBy { name }
      versions(first: 10) { nodes { version sizeBytes report { status quality { score } } sensitiveData { columns { name } } comparison { id } } } } } }`;

    async function countQueries(token: string): Promise<{ count: number; files: number }> {
      const { count, result: d } = await countAppQueries(() => data(token, QUERY));
      for (const f of d.files.nodes) {
        expect(f.versions.nodes).to.have.length(2);
        for (const v of f.versions.nodes) expect(v.report.quality.score).to.equal(90);
      }
      return { count, files: d.files.nodes.length };
    }

    it('runs a nested query over 50 files with versions and reports in as many SQL queries as over 5', async () => {
      expect(testEnv().deps.knex).to.equal(testEnv().appKnex);
      const small = await createTeam();
      const large = await createTeam();
      await seedFiles(small, 5);
      await seedFiles(large, 50);
      await countQueries(small.adminToken); // warm-up (first use of a pooled connection)
      const five = await countQueries(small.adminToken);
      const fifty = await countQueries(large.adminToken);
      expect(five.files).to.equal(5);
      expect(fifty.files).to.equal(50);
      // files, people, versions, reports, findings, comparisons: one query each, plus the request's own
      // (authentication, counting) — the same for 5 and for 50 files
      expect(fifty.count, `5 files: ${five.count}, 50 files: ${fifty.count}`).to.equal(five.count);
      expect(fifty.count).to.be.at.most(12);
    });
  });
});
