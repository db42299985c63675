import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig, serviceStartProblems } from '../common/config';
import { ROOT } from './helpers/env';

describe('configuration', () => {
  it('has working embedded defaults', () => {
    const config = loadConfig({});
    expect(config.port).to.equal(3000);
    expect(config.temporal).to.deep.equal({
      address: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'data-service',
    });
    expect(config.s3.endpoint).to.equal('http://127.0.0.1:9000');
  });

  it('names every bad variable and what is wrong', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        TEMPORAL_ADDRESS: 'nohost',
        LOG_LEVEL: 'loud',
      });
      expect.fail('should have thrown');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      const { problems } = err as ConfigError;
      expect(problems).to.have.lengthOf(4);
      expect(problems.join('\n'))
        .to.include('PORT must be a whole number')
        .and.include('DATABASE_URL must use');
      expect(problems.join('\n'))
        .to.include('TEMPORAL_ADDRESS must be host:port')
        .and.include('LOG_LEVEL must be one of');
    }
  });

  it('refuses out-of-range numbers', () => {
    expect(() => loadConfig({ PORT: '70000' })).to.throw(ConfigError, 'PORT must be between 0 and 65535');
    // the default life of a download link is capped like ?expiresIn (one hour)
    expect(loadConfig({ DOWNLOAD_LINK_TTL_SECONDS: '3600' }).files.downloadLinkTtlSeconds).to.equal(3600);
    expect(() => loadConfig({ DOWNLOAD_LINK_TTL_SECONDS: '3601' })).to.throw(
      ConfigError,
      'DOWNLOAD_LINK_TTL_SECONDS must be between 1 and 3600',
    );
  });

  it('S3_PUBLIC_ENDPOINT defaults to S3_ENDPOINT', () => {
    const config = loadConfig({ S3_ENDPOINT: 'https://s3.example.test' });
    expect(config.s3.publicEndpoint).to.equal('https://s3.example.test');
  });

  it("lists every variable it reads in README's configuration table", () => {
    const source = readFileSync(path.join(ROOT, 'common/config.ts'), 'utf8');
    // every read goes through the Reader: r.string('NAME', …), r.int('NAME', …), r.bool, r.url, …
    const read = [...source.matchAll(/\br\.\w+\(\s*'([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]);
    expect(read.length).to.be.greaterThan(30);
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('\n## Configuration\n');
    expect(start).to.be.greaterThan(-1);
    const section = readme.slice(start + 1, readme.indexOf('\n## ', start + 1));
    const table = section.split('\n').filter((line) => line.startsWith('| `'));
    const documented = new Set(
      table.flatMap((line) => [...line.split('|')[1].matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1])),
    );
    expect(read.filter((name) => !documented.has(name))).to.deep.equal([]);
  });

  describe('fails closed (a service start)', () => {
    const dev = 'ALLOW_DEVELOPMENT_DEFAULTS';
    const problemsOf = (env: Record<string, string>) => serviceStartProblems(loadConfig(env));

    it('without NODE_ENV refuses the built-in SECRET_KEY and the webhook development settings', () => {
      expect(problemsOf({})).to.have.lengthOf(1);
      expect(problemsOf({})[0]).to.match(/SECRET_KEY is the built-in development value/);
      const webhooks = problemsOf({
        SECRET_KEY: 'x'.repeat(40),
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_ALLOW_HTTP: 'true',
      });
      expect(webhooks.join('\n'))
        .to.include('WEBHOOK_ALLOW_PRIVATE_TARGETS')
        .and.include('WEBHOOK_ALLOW_HTTP');
      expect(problemsOf({ SECRET_KEY: 'x'.repeat(40) })).to.deep.equal([]);
    });

    it(`accepts them with ${dev}=true (scripts/start.sh), or with NODE_ENV test or development`, () => {
      expect(problemsOf({ [dev]: 'true', WEBHOOK_ALLOW_HTTP: 'true' })).to.deep.equal([]);
      expect(problemsOf({ NODE_ENV: 'development' })).to.deep.equal([]);
      expect(problemsOf({ NODE_ENV: 'test', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' })).to.deep.equal([]);
    });

    it(`production refuses ${dev} and the test-only webhook settings, whatever the flag`, () => {
      const production = { NODE_ENV: 'production', SECRET_KEY: 'x'.repeat(40) };
      for (const extra of [
        { [dev]: 'true' },
        { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', [dev]: 'true' },
        { WEBHOOK_ALLOW_HTTP: 'true' },
      ]) {
        expect(() => loadConfig({ ...production, ...extra }), JSON.stringify(extra)).to.throw(ConfigError);
      }
      expect(() => loadConfig({ NODE_ENV: 'production' })).to.throw(/SECRET_KEY must be set/);
    });
  });
});
