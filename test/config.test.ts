import { expect } from 'chai';
import { ConfigError, loadConfig } from '../common/config';

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
});
