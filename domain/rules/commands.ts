/**
 * Commands of quality rules: functions taking their dependencies, the acting principal and a unit of work
 * (the caller's transaction with its outbox) — never an HTTP context. Every change is audited in the same
 * transaction.
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../../common/errors';
import { PlanLimitError, requirePlan } from '../plans/errors';
import { NO_PLAN_MESSAGE, planLimits } from '../plans/plans';
import { auditActor, recordAudit } from '../audit/record';
import { Company, File, Rule } from '../../db/models';
import type { UnitOfWork } from '../../db/transaction';
import { assertMayWriteRules, findRule, visibleRules, type RulesPrincipal } from './access';
import { ruleProblems, type RuleKind, type Severity } from './kinds';

export interface RulesDeps {
  correlationId?: string;
}

export interface RuleInput {
  name: string;
  kind: RuleKind;
  column?: string | null;
  params?: Record<string, unknown>;
  severity?: Severity;
  tolerance?: number;
  active?: boolean;
  fileIds?: string[] | null;
}

export type RulePatch = Partial<RuleInput>;

export const NO_PLAN = NO_PLAN_MESSAGE;

/**
 * Every problem of the rule as it would be saved, plus file ids sent (`sentFileIds`: the body's, not those
 * already saved) that are not files of the company. The files named are locked against deletion until the
 * rule commits, so a file deleted meanwhile is forgotten by the rule (forgetFileInRules) rather than left named.
 */
async function assertValid(
  principal: RulesPrincipal,
  uow: UnitOfWork,
  rule: { kind: RuleKind; column: string | null; params: Record<string, unknown> },
  sentFileIds: string[] | null | undefined,
): Promise<void> {
  const problems = ruleProblems(rule);
  if (sentFileIds && sentFileIds.length > 0) {
    const found = new Set(
      (
        await File.scoped(principal.companyId, uow.trx)
          .whereIn('files.id', sentFileIds)
          .select('files.id')
          .forKeyShare()
      ).map((f) => f.id),
    );
    sentFileIds.forEach((id, i) => {
      if (!found.has(id)) problems.push(`body.fileIds[${i}]: no such file in the company`);
    });
  }
  if (problems.length > 0) throw new BadRequestError(problems.length === 1 ? problems[0] : problems);
}

function toleranceText(tolerance: number | undefined): string {
  // the caller's decimal as written (0.1 stays 1/10): JSON numbers print back as their shortest spelling
  return tolerance === undefined ? '0' : String(tolerance);
}

export async function createRule(
  deps: RulesDeps,
  principal: RulesPrincipal,
  uow: UnitOfWork,
  input: RuleInput,
): Promise<Rule> {
  assertMayWriteRules(principal);
  const fields = {
    kind: input.kind,
    column: input.column ?? null,
    params: input.params ?? {},
    fileIds: input.fileIds ?? null,
  };
  await assertValid(principal, uow, fields, fields.fileIds);
  // the company row lock makes count-then-insert safe against concurrent creations
  const company = await Company.scoped(principal.companyId, uow.trx).select('plan').forUpdate().first();
  if (!company) throw new NotFoundError();
  const plan = requirePlan(company.plan); // 402 without a plan
  const limit = planLimits(plan).rules;
  if (limit !== null) {
    const count = await visibleRules(principal, uow.trx).resultSize();
    if (count >= limit) {
      throw new PlanLimitError(
        `the ${plan} plan allows ${limit} quality rules; delete one or change the plan`,
      );
    }
  }
  const id = randomUUID();
  const created = await visibleRules(principal, uow.trx).insertAndFetch({
    id,
    name: input.name,
    kind: fields.kind,
    columnName: fields.column,
    params: fields.params,
    severity: input.severity ?? 'error',
    tolerance: toleranceText(input.tolerance),
    active: input.active ?? true,
    fileIds: fields.fileIds,
    createdByPersonId: principal.personId,
  });
  await recordAudit(uow.trx, {
    ...auditActor(principal, deps.correlationId),
    action: 'rule.created',
    resourceType: 'rule',
    resourceId: id,
    details: { kind: created.kind, column: created.columnName, severity: created.severity },
  });
  return created;
}

export async function updateRule(
  deps: RulesDeps,
  principal: RulesPrincipal,
  uow: UnitOfWork,
  id: string,
  patch: RulePatch,
): Promise<Rule> {
  assertMayWriteRules(principal);
  const current = await findRule(principal, uow.trx, id, true);
  const merged = {
    kind: patch.kind ?? (current.kind as RuleKind),
    column: patch.column !== undefined ? patch.column : current.columnName,
    params: patch.params ?? current.params,
  };
  await assertValid(principal, uow, merged, patch.fileIds);
  const changes: Partial<Rule> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.kind !== undefined) changes.kind = patch.kind;
  if (patch.column !== undefined) changes.columnName = patch.column;
  if (patch.params !== undefined) changes.params = patch.params;
  if (patch.severity !== undefined) changes.severity = patch.severity;
  if (patch.tolerance !== undefined) changes.tolerance = toleranceText(patch.tolerance);
  if (patch.active !== undefined) changes.active = patch.active;
  if (patch.fileIds !== undefined) changes.fileIds = patch.fileIds;
  const updated = await current.$query(uow.trx).patchAndFetch(changes);
  await recordAudit(uow.trx, {
    ...auditActor(principal, deps.correlationId),
    action: 'rule.updated',
    resourceType: 'rule',
    resourceId: id,
    details: { fields: Object.keys(patch) },
  });
  return updated;
}

export async function deleteRule(
  deps: RulesDeps,
  principal: RulesPrincipal,
  uow: UnitOfWork,
  id: string,
): Promise<void> {
  assertMayWriteRules(principal);
  const current = await findRule(principal, uow.trx, id, true);
  await current.$query(uow.trx).delete();
  await recordAudit(uow.trx, {
    ...auditActor(principal, deps.correlationId),
    action: 'rule.deleted',
    resourceType: 'rule',
    resourceId: id,
    details: { kind: current.kind, column: current.columnName },
  });
}
