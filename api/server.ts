/** API process entry: `node dist/api/server.js`. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, ConfigError, serviceStartProblems } from '../common/config';
import { createLogger } from '../common/logger';
import { createStorage } from '../common/storage';
import { createMailer } from '../common/mailer';
import { createTemporalClient } from '../common/temporal';
import { createKnex } from '../db/knex';
import { createApp } from './app';
import { flushRequestCounts } from '../domain/analytics/requests';

async function main(): Promise<void> {
  const config = loadConfig();
  const refused = serviceStartProblems(config);
  if (refused.length > 0) throw new ConfigError(refused);
  const logger = createLogger(config.logLevel, 'api');
  const knex = createKnex(config.databaseUrl, config.databasePoolMax, { actAs: config.databaseAppRole });
  const temporal = createTemporalClient(config);
  const storage = createStorage(config);
  const mailer = createMailer(config, logger);
  const app = createApp({ config, logger, knex, temporal, storage, mailer });

  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const { port } = server.address() as AddressInfo;
  logger.info({ address: `http://${config.host}:${port}` }, 'api listening');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api shutting down: finishing requests in flight');
    // stop accepting, let requests in flight finish, then close idle keep-alive sockets
    server.close(() => {
      void Promise.allSettled([
        flushRequestCounts(knex).then(() => knex.destroy()),
        temporal.connection.close(),
      ]).then(() => {
        logger.info('api stopped');
        process.exit(0);
      });
    });
    server.closeIdleConnections();
    setTimeout(() => {
      logger.warn('forcing exit after 15 s');
      process.exit(1);
    }, 15_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
