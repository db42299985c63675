/** Queries of quality rules (reads under files:read) and the snapshot a report build reads at its start. */
import type { Knex } from 'knex';
import { Rule } from '../../db/models';
import { findRule, visibleRules, type RulesPrincipal } from './access';
import type { BuildRule } from './evaluate';
import type { RuleKind } from './kinds';

/** The company's rules for a page-number list (the list orders them newest first). */
export function listRules(principal: RulesPrincipal, knex: Knex) {
  return visibleRules(principal, knex);
}

export async function getRule(principal: RulesPrincipal, knex: Knex, id: string): Promise<Rule> {
  return findRule(principal, knex, id);
}

/**
 * A file is being deleted: the rules restricted to it forget it, in the deletion's transaction (a rule
 * restricted to that file alone then applies to no file: `fileIds: []`, never to every file). Answers how many
 * rules changed.
 */
export async function forgetFileInRules(
  trx: Knex.Transaction,
  companyId: string,
  fileId: string,
): Promise<number> {
  return Rule.scoped(companyId, trx)
    .whereRaw('? = any(rules.file_ids)', [fileId])
    .patch({
      fileIds: Rule.raw('array_remove(rules.file_ids, ?::uuid)', [fileId]) as unknown as string[],
      updatedAt: Rule.raw('now()') as unknown as Date,
    });
}

/**
 * The rules a build of this file evaluates, read once when the build starts: the company's active rules
 * that are not restricted to other files. A rule changed while the build runs counts from the next build.
 */
export async function rulesForBuild(
  knex: Knex | Knex.Transaction,
  companyId: string,
  fileId: string,
): Promise<BuildRule[]> {
  const rows = await Rule.scoped(companyId, knex)
    .where('rules.active', true)
    .where((q) => q.whereNull('rules.fileIds').orWhereRaw('? = any(rules.file_ids)', [fileId]))
    .orderBy([{ column: 'rules.createdAt' }, { column: 'rules.id' }]);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    kind: r.kind as RuleKind,
    column: r.columnName,
    params: r.params,
    severity: r.severity,
    tolerance: String(r.tolerance),
  }));
}
