import { MAX_INT4 } from '../../validation';

/** JSON schemas of the comparison resource (OpenAPI and the typed test client read them). */
const versionRef = {
  type: 'object',
  additionalProperties: false,
  required: ['fileId', 'version'],
  properties: {
    fileId: { type: 'string', format: 'uuid' },
    version: { type: 'integer', minimum: 1, maximum: MAX_INT4 },
  },
} as const;

export const comparisonRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['base', 'target'],
  properties: {
    base: versionRef,
    target: versionRef,
    keyColumns: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: { type: 'string', minLength: 1, maxLength: 1000 },
      description:
        'header names that identify a row in both versions; without it a key is inferred (README "Comparisons")',
    },
  },
} as const;

const typeChange = {
  type: 'object',
  properties: { column: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } },
} as const;

export const comparisonSchema = {
  type: 'object',
  required: ['id', 'status'],
  properties: {
    id: { type: ['string', 'null'], description: 'null while an automatic comparison is not yet picked up' },
    fileId: { type: 'string' },
    base: versionRef,
    target: versionRef,
    automatic: { type: 'boolean', description: 'the comparison of a new version with its predecessor' },
    keyColumns: { type: ['array', 'null'], items: { type: 'string' } },
    status: { enum: ['queued', 'comparing', 'ready', 'failed'] },
    progress: {
      type: ['object', 'null'],
      properties: {
        phase: { type: ['string', 'null'] },
        sheetsDone: { type: 'integer' },
        sheetsTotal: { type: 'integer' },
        changesSaved: { type: 'integer' },
      },
    },
    failureReason: {
      type: ['string', 'null'],
      description:
        'unparsable_file, too_many_columns, too_many_rows, unsafe_workbook, file_missing, missing_key_column, internal_error',
    },
    failureMessage: { type: ['string', 'null'] },
    queuedAt: { type: 'string' },
    startedAt: { type: ['string', 'null'] },
    finishedAt: { type: ['string', 'null'] },
    result: {
      type: ['object', 'null'],
      description: 'when ready: counts, schema changes and the matching of each sheet',
      properties: {
        added: { type: 'integer' },
        removed: { type: 'integer' },
        changed: { type: 'integer' },
        unchanged: { type: 'integer' },
        changeCount: { type: 'integer' },
        sheetsAdded: { type: 'array', items: { type: 'string' } },
        sheetsRemoved: { type: 'array', items: { type: 'string' } },
        columnsAdded: { type: 'array', items: { type: 'string' } },
        columnsRemoved: { type: 'array', items: { type: 'string' } },
        typeChanges: { type: 'array', items: typeChange },
        sheets: { type: 'array', items: { type: 'object' } },
      },
    },
  },
} as const;

export const changeSchema = {
  type: 'object',
  required: ['kind'],
  properties: {
    sheet: { type: 'string' },
    kind: { enum: ['added', 'removed', 'changed'] },
    key: {
      type: ['object', 'null'],
      description: 'the key columns as typed (target; base for removed); null with whole-row matching',
    },
    baseRow: { type: ['integer', 'null'], description: 'row number in the base (the header is row 1)' },
    targetRow: { type: ['integer', 'null'] },
    columns: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        properties: {
          column: { type: 'string' },
          old: { type: ['string', 'null'] },
          new: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;
