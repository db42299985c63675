/**
 * Mentions in a comment's body: `@` directly followed by a person's id (a UUID) or e-mail address, e.g.
 * "@3f0c…-…-…  please check" or "thanks @ana@example.com." (a trailing . , ; : ! ? ) is not part of the
 * address). Matching is case-insensitive. Who is notified is decided in comments.ts: people of the company
 * who can see the file.
 */
const UUID = /@([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9a-z-])/gi;
const EMAIL = /(?:^|[^\w.+-])@([\w.+-]+@[\w-]+(?:\.[\w-]+)+)/g;

export interface Mentions {
  personIds: string[];
  emails: string[];
}

/** The ids and addresses mentioned in `body` (each once, lower case), at most 50 of each. */
export function parseMentions(body: string): Mentions {
  const personIds = new Set<string>();
  const emails = new Set<string>();
  for (const m of body.matchAll(UUID)) personIds.add(m[1].toLowerCase());
  for (const m of body.matchAll(EMAIL)) emails.add(m[1].replace(/[.]+$/, '').toLowerCase());
  return { personIds: [...personIds].slice(0, 50), emails: [...emails].slice(0, 50) };
}
