import { expect } from 'chai';
import { ConfigError, loadConfig } from '../common/config';

describe('configuration: Google sign-in and demo', () => {
  it('defaults: Google sign-in off, JSON callback, demo on', () => {
    const config = loadConfig({});
    expect(config.google.clientId).to.equal('');
    expect(config.oauth.redirectAfter).to.equal('');
    expect(config.demoEnabled).to.equal(true);
  });

  it('reads OAUTH_REDIRECT_AFTER and DEMO_ENABLED', () => {
    const config = loadConfig({
      OAUTH_REDIRECT_AFTER: 'https://app.example.test/done',
      DEMO_ENABLED: 'false',
    });
    expect(config.oauth.redirectAfter).to.equal('https://app.example.test/done');
    expect(config.demoEnabled).to.equal(false);
  });

  it('names each bad value', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigError);
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ OAUTH_REDIRECT_AFTER: 'not a url' })).to.deep.equal([
      'OAUTH_REDIRECT_AFTER must be a URL (got "not a url")',
    ]);
    expect(problems({ GOOGLE_CLIENT_ID: 'abc' })).to.deep.equal([
      'GOOGLE_CLIENT_SECRET must be set when GOOGLE_CLIENT_ID is set',
    ]);
    expect(
      problems({
        NODE_ENV: 'production',
        SECRET_KEY: 'x'.repeat(40),
        GOOGLE_CLIENT_ID: 'abc',
        GOOGLE_CLIENT_SECRET: 'def',
        GOOGLE_OIDC_ISSUER: 'http://127.0.0.1:9999',
      }),
    ).to.deep.equal(['GOOGLE_OIDC_ISSUER must use https: in production']);
  });
});
