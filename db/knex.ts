import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { knexSnakeCaseMappers, Model } from 'objection';

export type { Knex };

/** snake_case in the database, camelCase in code: one mapper for every query, objection's and raw knex's. */
export function knexConfig(databaseUrl: string, poolMax = 10): Knex.Config {
  return {
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: 'data-service' },
    pool: { min: 0, max: poolMax },
    migrations: {
      directory: path.join(__dirname, 'migrations'),
      loadExtensions: ['.js'],
      tableName: 'knex_migrations',
    },
    ...knexSnakeCaseMappers(),
  };
}

export function createKnex(databaseUrl: string, poolMax = 10): Knex {
  const knex = knexFactory(knexConfig(databaseUrl, poolMax));
  Model.knex(knex);
  return knex;
}

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest()) as [number, string[]];
  return applied;
}
