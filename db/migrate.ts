/** `npm run migrate`: applies pending migrations to DATABASE_URL. */
import { loadConfig } from '../common/config';
import { createKnex, migrateLatest } from './knex';

async function main(): Promise<void> {
  const config = loadConfig();
  const knex = createKnex(config.databaseUrl, 2);
  try {
    const applied = await migrateLatest(knex);
    console.log(applied.length ? `applied migrations: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
