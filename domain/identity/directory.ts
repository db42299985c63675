/**
 * The company's people as every member sees them (GraphQL): admins see each person's full record (as
 * GET /employees shows it); employees see names and roles only — and their own full record.
 */
import { raw } from 'objection';
import type { Person } from '../../db/models';
import { peopleOf, type Actor, type Db, type PersonRow } from './access';
import { presentPerson } from './present';

/** The people of `ids` in the actor's company (another company's person is left out). */
export function peopleByIds(
  actor: Pick<Actor, 'companyId'>,
  db: Db,
  ids: readonly string[],
): Promise<Person[]> {
  return peopleOf(actor, db).whereIn('people.id', [...ids]) as unknown as Promise<Person[]>;
}

export interface DirectoryPerson {
  id: string;
  name: string;
  role: string;
  email: string | null;
  status: string | null;
  createdAt: string | null;
}

/** A person as `actor` may see them. */
export function presentPersonTo(actor: Pick<Actor, 'role' | 'personId'>, p: PersonRow): DirectoryPerson {
  if (actor.role === 'admin' || actor.personId === p.id) return presentPerson(p);
  return { id: p.id, name: p.name, role: p.role, email: null, status: null, createdAt: null };
}

/** A page of the company's people, newest first by (created_at, id), after `after` (`limit` + 1 rows). */
export function peoplePage(
  actor: Pick<Actor, 'companyId'>,
  db: Db,
  page: { limit: number; after?: { t: string; i: string } },
): Promise<Array<Person & { cursorAt: string }>> {
  const q = peopleOf(actor, db).select(
    'people.*',
    raw(`to_char(people.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`),
  );
  if (page.after)
    void q.whereRaw('(people.created_at, people.id) < (?::timestamptz, ?)', [page.after.t, page.after.i]);
  return q
    .orderBy([
      { column: 'people.createdAt', order: 'desc' },
      { column: 'people.id', order: 'desc' },
    ])
    .limit(page.limit + 1) as unknown as Promise<Array<Person & { cursorAt: string }>>;
}
