import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { knexSnakeCaseMappers, Model } from 'objection';
import { actingKey, actingSettings, currentActing, touchesNoTenantRows } from './unitOfWork';

export type { Knex };

/** snake_case in the database, camelCase in code: one mapper for every query, objection's and raw knex's. */
export function knexConfig(databaseUrl: string, poolMax = 10, options: KnexOptions = {}): Knex.Config {
  const { actAs } = options;
  if (actAs !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(actAs)) throw new Error(`invalid role ${actAs}`);
  const config: Knex.Config & { actAs?: string } = {
    actAs, // read back by db/unitOfWork.ts (which role a system task leaves for its system role)
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: 'data-service' },
    pool: {
      min: 0,
      max: poolMax,
      // the application role (db/rls.ts) for the whole life of the connection: row-level security applies
      ...(actAs && {
        afterCreate: (conn: PgConnection, done: (err: Error | null, conn: PgConnection) => void) => {
          conn.query(`set role ${actAs}`, (err) => done(err, conn));
        },
      }),
    },
    migrations: {
      directory: path.join(__dirname, 'migrations'),
      loadExtensions: ['.js'],
      tableName: 'knex_migrations',
    },
    ...knexSnakeCaseMappers(),
  };
  return config;
}

interface PgConnection {
  query(sql: string, callback: (err: Error | null) => void): void;
}

export interface KnexOptions {
  /**
   * The role every connection acts as (`SET ROLE` once connected): the API and the worker pass
   * `config.databaseAppRole`, so row-level security applies to them; migrations and operator scripts
   * pass nothing and act as the connecting owner.
   */
  actAs?: string;
}

export function createKnex(databaseUrl: string, poolMax = 10, options: KnexOptions = {}): Knex {
  const knex = knexFactory(knexConfig(databaseUrl, poolMax, options));
  if (options.actAs) actOnCheckout(knex, options.actAs);
  Model.knex(knex);
  return knex;
}

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest()) as [number, string[]];
  return applied;
}

interface ActingConnection {
  query(sql: string, values: unknown[]): Promise<unknown>;
  /** what the connection's session-level settings hold now ('' for no one) */
  actingKey?: string;
}

/**
 * A statement run outside an explicit unit of work (`knex('t')…` or a model query without a transaction)
 * acts as the surrounding scope's actor too (db/unitOfWork.ts `actingAs`: the request's principal, a public
 * route's or an activity's named system task): when a connection is taken from the pool, its session-level
 * role, `app.company_id` and `app.system_task` are set to that actor (a system task's role is the system
 * role) — or emptied outside any scope, so nothing of any company is visible. The settings are remembered
 * per connection and written only when they change, so a process acting for one company pays nothing per
 * query. An explicit unit of work whose actor is not the one its connection holds sets its own with
 * `set_config(..., true)`, which ends with its transaction (db/unitOfWork.ts `applyActing`).
 */
function actOnCheckout(knex: Knex, appRole: string): void {
  const client = knex.client as {
    acquireConnection(): Promise<ActingConnection>;
    releaseConnection(conn: ActingConnection): Promise<unknown>;
  };
  const acquire = client.acquireConnection.bind(client);
  client.acquireConnection = async () => {
    const conn = await acquire();
    if (touchesNoTenantRows() && conn.actingKey !== undefined) return conn; // e.g. request budget counters
    const settings = actingSettings(currentActing(), appRole);
    const key = actingKey(settings);
    if (conn.actingKey !== key) {
      try {
        conn.actingKey = undefined;
        await conn.query(
          `select set_config('role', $1, false), set_config('app.company_id', $2, false),
                  set_config('app.system_task', $3, false)`,
          settings,
        );
        conn.actingKey = key;
      } catch (err) {
        await client.releaseConnection(conn);
        throw err;
      }
    }
    return conn;
  };
}
