/**
 * Who is calling, read afresh: the live API key a token holds, or the open session an access token names,
 * each with its owner and company as they are now. The adapters decide what a caller may do with it (the
 * API's route table: api/middlewares/authenticate.ts); nothing here is cached beyond the call.
 */
import type { Knex } from 'knex';
import type { PlanName } from '../plans/plans';
import { constantTimeEqual, fingerprint } from '../../common/secrets';
import { actingStatement } from '../../db/unitOfWork';
import { parseKey } from './keyFormat';
import { keysOf } from './keys';
import { mayHoldScope, type Role, type Scope } from './scopes';
import { LOGOUT, type AccessClaims } from './sessions';

/** The caller's person and company, as read for this request. */
export interface CallerRow {
  personId: string;
  companyId: string;
  role: Role;
  personStatus: string;
  companyStatus: string;
  plan: PlanName | null;
}

/** The columns of `CallerRow`, from `people as p` joined with `companies as c`. */
export const CALLER_COLUMNS = [
  'p.id as personId',
  'p.companyId',
  'p.role',
  'p.status as personStatus',
  'c.status as companyStatus',
  'c.plan',
] as const;

/** An API key with its owner and company, as read for this request. */
export interface ApiKeyRow extends CallerRow {
  apiKeyId: string;
  secretFingerprint: string;
  scopes: Scope[];
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** The key named by `identifier`, with its owner and company, read afresh. */
async function readKeyRow(knex: Knex, identifier: string): Promise<ApiKeyRow | undefined> {
  // the key's company is not known yet: the named system task that may look a key up in any company
  // (one statement: its connection is set to the task when taken from the pool, db/knex.ts)
  return (await actingStatement({ system: 'api-key-lookup' }, () =>
    knex('apiKeys as k')
      .join('people as p', 'p.id', 'k.personId')
      .join('companies as c', 'c.id', 'k.companyId')
      .where('k.identifier', identifier)
      .first(
        'k.id as apiKeyId',
        'k.secretFingerprint',
        'k.scopes',
        'k.revokedAt',
        'k.lastUsedAt',
        ...CALLER_COLUMNS,
      ),
  )) as ApiKeyRow | undefined;
}

/**
 * The live key whose secret `token` holds, or null: malformed, unknown identifier, wrong secret or revoked.
 * The fingerprint is computed and compared even when no key has the identifier, so an unknown identifier
 * costs what a known one does. The owner's and the company's status are for the caller to judge.
 */
export async function verifyApiKey(
  deps: { knex: Knex; config: { secretKey: string } },
  token: string,
): Promise<ApiKeyRow | null> {
  const parsed = parseKey(token);
  if (!parsed) return null;
  const row = await readKeyRow(deps.knex, parsed.identifier);
  const presented = fingerprint(keysOf(deps.config).apiKey, token);
  const matches = constantTimeEqual(presented, row?.secretFingerprint ?? '0'.repeat(presented.length));
  return row && matches && !row.revokedAt ? row : null;
}

/** A key acts as its owner is now: scopes the owner's role may no longer give are dropped. */
export function effectiveScopes(row: Pick<ApiKeyRow, 'role' | 'scopes'>): Scope[] {
  return row.scopes.filter((s) => mayHoldScope(row.role, s));
}

const LAST_USED_WRITE_INTERVAL_S = 60;

/** Records that the key was used, at most about once a minute per key (busy keys do not contend on one row). */
export async function noteKeyUse(
  knex: Knex,
  row: Pick<ApiKeyRow, 'apiKeyId' | 'companyId' | 'lastUsedAt'>,
): Promise<void> {
  if (row.lastUsedAt && Date.now() - row.lastUsedAt.getTime() <= LAST_USED_WRITE_INTERVAL_S * 1000) return;
  await actingStatement({ companyId: row.companyId }, () =>
    knex('apiKeys')
      .where({ id: row.apiKeyId })
      .where((q) =>
        q
          .whereNull('lastUsedAt')
          .orWhere('lastUsedAt', '<', knex.raw(`now() - interval '${LAST_USED_WRITE_INTERVAL_S} seconds'`)),
      )
      .update({ lastUsedAt: knex.fn.now() }),
  );
}

/**
 * The session an access token's (verified) claims name, with its person and company, read afresh. A session
 * ended by logout still answers: the spec lets its access token run out on its own clock (at most 900 s; its
 * refresh token is refused at once). A session ended for any other reason — a reused refresh token (a sign of
 * theft), a password reset, the person disabled or removed — refuses its access tokens from the next request.
 */
export async function sessionCaller(
  knex: Knex,
  claims: AccessClaims,
): Promise<(CallerRow & { demo: boolean }) | undefined> {
  // the signed token names the company: the lookup already acts for it (one statement: its connection is
  // set to the company when taken from the pool, db/knex.ts)
  return (await actingStatement({ companyId: claims.companyId }, () =>
    knex('sessions as s')
      .join('people as p', 'p.id', 's.personId')
      .join('companies as c', 'c.id', 'p.companyId')
      .where({ 's.id': claims.sessionId, 's.personId': claims.personId, 'p.companyId': claims.companyId })
      .where((q) => q.whereNull('s.endedAt').orWhere('s.endReason', LOGOUT))
      .select(...CALLER_COLUMNS, 's.demo')
      .first(),
  )) as (CallerRow & { demo: boolean }) | undefined;
}
