/** OpenAPI schemas of the report sections issue 13 adds (README "Quality rules…", "Sensitive data"). */
const counts = {
  evaluatedUnits: { type: 'integer', minimum: 0 },
  failedUnits: { type: 'integer', minimum: 0 },
} as const;
const status = { enum: ['passed', 'warn', 'failed', 'not_applicable'] } as const;
const dimension = { enum: ['completeness', 'validity', 'uniqueness', 'volume'] } as const;
const percent = { type: ['number', 'null'], minimum: 0, maximum: 100 } as const;

export const qualitySectionSchema = {
  type: 'object',
  description:
    'quality rules evaluated in the report pass (rules read when the build started) and the quality score: ' +
    '100 × mean of the dimension scores (each the mean of p = 1 − failed/evaluated over its applicable rules), ' +
    'rounded half-up to 2 decimals from exact ratios; null when no rule applies',
  properties: {
    score: percent,
    dimensions: {
      type: 'object',
      properties: { completeness: percent, validity: percent, uniqueness: percent, volume: percent },
    },
    rulesPassed: { type: 'integer', minimum: 0 },
    rulesEvaluated: { type: 'integer', minimum: 0, description: 'applicable rules, company and default' },
    unitsPassed: { type: 'integer', minimum: 0 },
    unitsEvaluated: { type: 'integer', minimum: 0 },
    failedErrorRules: { type: 'integer', minimum: 0 },
    rules: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          ruleId: { type: 'string', format: 'uuid' },
          name: { type: 'string' },
          kind: { type: 'string' },
          column: { type: ['string', 'null'] },
          dimension,
          severity: { enum: ['error', 'warn'] },
          tolerance: { type: 'number' },
          status,
          ...counts,
          failingRows: {
            type: 'array',
            maxItems: 10,
            items: { type: 'integer' },
            description: 'up to 10 failing row numbers (the header is row 1), never values',
          },
          sheets: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                sheet: { type: 'string' },
                ...counts,
                failingRows: { type: 'array', items: { type: 'integer' } },
              },
            },
          },
          problem: { type: 'string', description: 'why the engine could not evaluate the rule' },
        },
      },
    },
    defaultRules: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          rule: { enum: ['completeness', 'validity', 'duplicate_rows', 'volume'] },
          dimension,
          sheet: { type: 'string' },
          column: { type: ['string', 'null'] },
          expectedType: { type: 'string' },
          status,
          ...counts,
        },
      },
    },
  },
} as const;

export const sensitiveSectionSchema = {
  type: 'object',
  description:
    'columns flagged as personal or secret data (their top values, min, max, quantiles, mean and deviation are ' +
    'withheld from the profile); never a value',
  properties: {
    columns: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          sheet: { type: 'string' },
          column: { type: 'string' },
          kinds: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                kind: { type: 'string' },
                share: {
                  type: 'number',
                  minimum: 0,
                  maximum: 1,
                  description: 'validated matches / values looked at',
                },
              },
            },
          },
        },
      },
    },
    sampleSize: { type: 'integer', description: 'distinct values looked at per column, at most' },
  },
} as const;
