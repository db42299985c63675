import {
  companyAnalytics,
  DEFAULT_RANGE_DAYS,
  GRANULARITIES,
  MAX_RANGE_DAYS,
  TOP_RULES,
  type AnalyticsQuery,
} from '../../../domain/analytics/series';
import { flushRequestCounts } from '../../../domain/analytics/requests';
import { principalOf } from '../../middlewares/authenticate';
import { route } from '../../routing';

const count = { type: 'number', minimum: 0 } as const;
const series = { type: 'array', items: count } as const;

const periodSchema = {
  type: 'object',
  required: [
    'start',
    'end',
    'uploads',
    'bytesUploaded',
    'bytesStored',
    'reports',
    'averageQualityScore',
    'filesWithSensitiveData',
    'activePeople',
  ],
  properties: {
    start: { type: 'string', format: 'date' },
    end: { type: 'string', format: 'date' },
    uploads: { type: 'object', properties: { files: count, versions: count } },
    bytesUploaded: { ...count, description: 'bytes of the versions uploaded in the period' },
    bytesStored: {
      ...count,
      description: 'bytes of the stored versions at the end of the period (deleted versions subtracted)',
    },
    reports: { type: 'object', properties: { ready: count, failed: count } },
    averageQualityScore: {
      type: ['number', 'null'],
      description: 'null when no report of the period had a score',
    },
    scoredReports: count,
    rulesFailed: count,
    versionsWithSensitiveData: {
      ...count,
      description: 'versions flagged with personal or secret data (a file with two counts twice)',
    },
    filesWithSensitiveData: {
      ...count,
      description: 'distinct files with a version flagged with personal or secret data in the period',
    },
    comparisons: { type: 'object', properties: { ready: count, withChanges: count } },
    apiRequests: count,
    webhookDeliveries: { type: 'object', properties: { succeeded: count, failed: count } },
    activePeople: count,
  },
} as const;

const analyticsSchema = {
  type: 'object',
  required: [
    'from',
    'to',
    'granularity',
    'periods',
    'topFailedRules',
    'apiRequestsByKey',
    'webhookDeliveriesByEndpoint',
  ],
  properties: {
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    granularity: { enum: GRANULARITIES },
    periods: { type: 'array', items: periodSchema },
    topFailedRules: {
      type: 'array',
      items: {
        type: 'object',
        properties: { ruleId: { type: 'string' }, name: { type: ['string', 'null'] }, failures: count },
      },
    },
    apiRequestsByKey: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          apiKeyId: { type: 'string' },
          name: { type: ['string', 'null'] },
          prefix: { type: ['string', 'null'] },
          total: count,
          requests: series,
        },
      },
    },
    webhookDeliveriesByEndpoint: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          endpointId: { type: 'string' },
          name: { type: ['string', 'null'] },
          succeeded: series,
          failed: series,
        },
      },
    },
  },
} as const;

export const analyticsRoutes = [
  route({
    method: 'get',
    path: '/analytics',
    summary: 'The company’s activity as time series (admin session; employees and API keys get 403)',
    tag: 'Analytics',
    operationId: 'getAnalytics',
    access: { roles: ['admin'] },
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        from: {
          type: 'string',
          format: 'date',
          description: `first day (UTC, included); default: ${DEFAULT_RANGE_DAYS - 1} days before \`to\``,
        },
        to: { type: 'string', format: 'date', description: 'last day (UTC, included); default: today' },
        granularity: {
          enum: GRANULARITIES,
          default: 'day',
          description: 'periods: UTC days, ISO weeks (Monday first) or calendar months',
        },
      },
    },
    responses: {
      200: {
        description:
          `One entry per period of the range, zeros for periods without activity; at most ${MAX_RANGE_DAYS} ` +
          'days per request (400 beyond). Read from daily rollups written with each change (README ' +
          '"Analytics"): uploads (files, versions, bytes), bytes stored at the end of each period, reports ready and failed, the mean quality score, ' +
          `failed rules (and the ${TOP_RULES} most failed over the range), versions and files with sensitive data, ` +
          'comparisons (and those with row changes), API requests per key and active people (from every ' +
          'authenticated request, counted at authentication), webhook deliveries per endpoint.',
        schema: analyticsSchema,
      },
    },
    handler: async (ctx, { query }: { query: AnalyticsQuery }) => {
      // this process's counted requests first, so a caller's own recent requests are in the answer
      await flushRequestCounts(ctx.deps.knex);
      return { body: await companyAnalytics(principalOf(ctx), ctx.deps.knex, query) };
    },
  }),
];
