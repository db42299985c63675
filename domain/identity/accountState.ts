import type { Knex } from 'knex';
import { ForbiddenError } from '../../common/errors';

/** A person with the state sign-in looks at: their own status and their company's. */
export interface PersonAccount {
  id: string;
  companyId: string;
  email: string;
  status: string;
  passwordHash: string | null;
  googleSubject: string | null;
  companyStatus: string;
}

export const ACCOUNT_MESSAGES = {
  notActivated: 'the account is not activated',
  disabled: 'the account is disabled',
  companyInactive: 'the company is not active',
} as const;

/** People joined to their company, selecting the fields of `PersonAccount`; add the where clause. */
export function personAccounts(db: Knex | Knex.Transaction): Knex.QueryBuilder {
  return db('people as p')
    .join('companies as c', 'c.id', 'p.companyId')
    .select(
      'p.id',
      'p.companyId',
      'p.email',
      'p.status',
      'p.passwordHash',
      'p.googleSubject',
      'c.status as companyStatus',
    );
}

/** The person with this address (compared case-insensitively, surrounding blanks ignored), or undefined. */
export async function personByEmail(
  db: Knex | Knex.Transaction,
  address: string,
  options: { forUpdate?: boolean } = {},
): Promise<PersonAccount | undefined> {
  const q = personAccounts(db).whereRaw('lower(p.email) = lower(?)', [address.trim()]);
  if (options.forUpdate) void q.forUpdate('p');
  return (await q.first()) as PersonAccount | undefined;
}

/** The 403s of every sign-in (password, Google): account not activated, disabled, company not active. */
export function refuseInactive(person: Pick<PersonAccount, 'status' | 'companyStatus'>): void {
  if (person.status === 'not_activated') throw new ForbiddenError(ACCOUNT_MESSAGES.notActivated);
  if (person.status === 'disabled') throw new ForbiddenError(ACCOUNT_MESSAGES.disabled);
  if (person.companyStatus !== 'active') throw new ForbiddenError(ACCOUNT_MESSAGES.companyInactive);
}
