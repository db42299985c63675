/** JSON schemas of the report resource (OpenAPI and the typed test client read them). */
import { qualitySectionSchema, sensitiveSectionSchema } from '../rules/schemas';
const nullableNumber = { type: ['number', 'null'] } as const;

const columnProfileSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    position: { type: 'integer' },
    inferredType: {
      enum: ['integer', 'decimal', 'boolean', 'date', 'datetime', 'text'],
      description:
        'the narrowest class holding every non-null value (README "Reports", notation); in a semicolon-delimited ' +
        'CSV a number with a decimal comma (1,5 or 1.234,5, thousands also grouped by no-break spaces) and a ' +
        'day-first date (15.03.2024, 5/3/2024 9:05) are read as that number and date, and shown as 1.5 and ' +
        '2024-03-15; in a comma-delimited CSV a quoted number with thousands grouped by commas ("1,234.5") as ' +
        "1234.5 and dates with slashes in the order the file's dates show (3/15/2024 month-first, 15/3/2024 " +
        'day-first); a tab-delimited one either way as its cells show; in any CSV 2024/3/15 is a date, a number ' +
        'with a currency sign ($1,234.50, 1.234,50 €) that number, one with a percent sign a hundredth of it ' +
        '(12% is 0.12), an accounting negative in parentheses (($5.00)) negative, and a spreadsheet error value ' +
        '(#DIV/0!) null, counted in the warning unreadable_cells',
    },
    count: { type: 'integer' },
    nulls: { type: 'integer' },
    nonNull: { type: 'integer' },
    shares: {
      type: 'object',
      description: 'share of the non-null values in each class (each value in exactly one; sums to 1)',
      additionalProperties: { type: 'number' },
    },
    distinct: { type: 'integer', description: 'exact count of distinct non-null values (as text)' },
    min: { description: 'typed minimum (number, ISO date/datetime, boolean, text)' },
    max: { description: 'typed maximum' },
    mean: nullableNumber,
    stddev: { ...nullableNumber, description: 'sample standard deviation (n − 1)' },
    quantiles: {
      type: ['object', 'null'],
      description: 'exact, linear interpolation between the two nearest values (numeric columns)',
      properties: {
        p5: { type: 'number' },
        p25: { type: 'number' },
        p50: { type: 'number' },
        p75: { type: 'number' },
        p95: { type: 'number' },
      },
    },
    zeros: { type: ['integer', 'null'] },
    negatives: { type: ['integer', 'null'] },
    length: {
      type: ['object', 'null'],
      properties: { min: { type: 'integer' }, max: { type: 'integer' }, mean: { type: 'number' } },
    },
    topValues: {
      type: 'array',
      items: {
        type: 'object',
        properties: { value: { type: 'string' }, count: { type: 'integer' } },
      },
    },
  },
} as const;

const warningSchema = {
  type: 'object',
  properties: {
    code: {
      description:
        'unreadable_cells: XLSX error cells and formulas without a saved result, CSV cells holding a spreadsheet ' +
        'error value (#DIV/0!, #VALUE!, …), all counted as null; rows_wider_than_header; blank_header_cells; ' +
        'repeated_header_names; lines_before_header: lines or rows above the header (a separator line, a title, ' +
        'notes)',
      enum: [
        'unreadable_cells',
        'rows_wider_than_header',
        'blank_header_cells',
        'repeated_header_names',
        'lines_before_header',
      ],
    },
    count: { type: 'integer' },
    message: { type: 'string' },
  },
} as const;

export const profileSchema = {
  type: ['object', 'null'],
  description: 'present when the report is ready',
  properties: {
    format: { enum: ['xlsx', 'csv', 'tsv'] },
    sheets: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          index: { type: 'integer' },
          rows: { type: 'integer' },
          columns: { type: 'integer' },
          duplicateRows: { type: 'integer' },
          blankRows: { type: 'integer' },
          warnings: { type: 'array', items: warningSchema },
          columnProfiles: { type: 'array', items: columnProfileSchema },
        },
      },
    },
  },
} as const;

export const reportSchema = {
  type: 'object',
  required: ['fileId', 'version', 'status', 'build'],
  properties: {
    fileId: { type: 'string', format: 'uuid' },
    version: { type: 'integer' },
    reportId: { type: ['string', 'null'] },
    build: { type: 'integer', description: '1 for the build the upload started; 2, 3, … for rebuilds' },
    status: {
      enum: ['queued', 'building', 'ready', 'failed'],
      description: 'queued → building → ready | failed',
    },
    progress: {
      type: ['object', 'null'],
      description: 'while building: rows read, bytes read of the total, the current phase',
      properties: {
        rowsRead: { type: 'integer' },
        bytesRead: { type: 'integer' },
        bytesTotal: { type: 'integer' },
        phase: { type: ['string', 'null'] },
      },
    },
    failure: {
      type: ['object', 'null'],
      description:
        'when failed: a reason code (unparsable_file, too_many_columns, too_many_rows, unsafe_workbook, file_missing, internal_error) and a message that never holds a cell value',
      properties: { reason: { type: 'string' }, message: { type: ['string', 'null'] } },
    },
    queuedAt: { type: 'string', format: 'date-time' },
    startedAt: { type: ['string', 'null'], format: 'date-time' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
    profile: profileSchema,
    sections: {
      type: ['object', 'null'],
      description: 'sections added by later analysis steps (quality rules, sensitive data), by name',
      properties: { quality: qualitySectionSchema, sensitiveData: sensitiveSectionSchema },
    },
  },
} as const;
