import type { Rule } from '../../db/models';

function iso(value: Date | string | null | undefined): string | null {
  return value ? new Date(value).toISOString() : null;
}

/** A rule as the API shows it, field by field. */
export function presentRule(rule: Rule) {
  return {
    id: rule.id,
    name: rule.name,
    kind: rule.kind,
    column: rule.columnName,
    params: rule.params,
    severity: rule.severity,
    tolerance: Number(rule.tolerance),
    active: rule.active,
    fileIds: rule.fileIds,
    createdAt: iso(rule.createdAt),
    updatedAt: iso(rule.updatedAt),
  };
}

export const ruleSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'name',
    'kind',
    'column',
    'params',
    'severity',
    'tolerance',
    'active',
    'fileIds',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    kind: { type: 'string' },
    column: { type: ['string', 'null'], description: 'the column a column rule checks; null for row_count' },
    params: { type: 'object' },
    severity: { enum: ['error', 'warn'] },
    tolerance: { type: 'number', minimum: 0, maximum: 1 },
    active: { type: 'boolean' },
    fileIds: {
      type: ['array', 'null'],
      items: { type: 'string', format: 'uuid' },
      description: 'the files the rule is restricted to; null for every file',
    },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;
