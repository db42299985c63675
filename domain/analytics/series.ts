/**
 * GET /analytics: the company's time series, read from the daily rollups (analytics_daily,
 * analytics_requests, analytics_sensitive_files) — at most (days × metrics) small rows on the company's
 * primary-key range, plus the stored bytes before the range (one row per day of the company's life, through a
 * partial index), never a scan of files, versions, reports or deliveries. Periods are UTC days, ISO weeks (Monday first) or calendar
 * months; every period of the range is present, with zeros when nothing happened.
 */
import type { Knex } from 'knex';
import { raw } from 'objection';
import { BadRequestError } from '../../common/errors';
import {
  AnalyticsDay,
  AnalyticsRequests,
  AnalyticsSensitiveFile,
  ApiKey,
  Rule,
  WebhookEndpoint,
} from '../../db/models';
import { keyPrefix } from '../identity/keyFormat';
import { SESSION_KEY } from './requests';

export const GRANULARITIES = ['day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** The longest range one request may ask for, in days (both ends included). */
export const MAX_RANGE_DAYS = 366;
/** The default range: the last 30 days up to today (UTC). */
export const DEFAULT_RANGE_DAYS = 30;
/** How many rules `topFailedRules` names. */
export const TOP_RULES = 10;

export interface AnalyticsActor {
  companyId: string;
}

export interface AnalyticsQuery {
  from?: string;
  to?: string;
  granularity?: Granularity;
}

export interface Period {
  /** first day of the period inside the range (YYYY-MM-DD) */
  start: string;
  /** last day of the period inside the range */
  end: string;
  uploads: { files: number; versions: number };
  /** bytes of the versions uploaded in the period (deletions do not lower it) */
  bytesUploaded: number;
  /** bytes of the company's stored versions at the end of the period (uploads add, deletions subtract) */
  bytesStored: number;
  reports: { ready: number; failed: number };
  /** the mean quality score of the reports saved in the period; null when no report had a score */
  averageQualityScore: number | null;
  scoredReports: number;
  rulesFailed: number;
  /** versions flagged in the period (a file with two flagged versions counts twice) */
  versionsWithSensitiveData: number;
  /** distinct files with a version flagged in the period */
  filesWithSensitiveData: number;
  comparisons: { ready: number; withChanges: number };
  apiRequests: number;
  webhookDeliveries: { succeeded: number; failed: number };
  activePeople: number;
}

const DAY_MS = 86_400_000;
/** The analytics_daily metric of a day's net change of the stored bytes (its rows have a partial index). */
const BYTES_STORED_CHANGE = 'bytes_stored_change';

function parseDay(name: string, value: string): Date {
  const d = new Date(`${value}T00:00:00Z`);
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(value) ||
    Number.isNaN(d.getTime()) ||
    d.toISOString().slice(0, 10) !== value
  )
    throw new BadRequestError(`query.${name} must be a date (YYYY-MM-DD)`);
  return d;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The start of the period holding `d` (UTC). */
function periodStart(d: Date, g: Granularity): Date {
  if (g === 'day') return d;
  if (g === 'week') return new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * DAY_MS);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

function nextPeriod(start: Date, g: Granularity): Date {
  if (g === 'day') return new Date(start.getTime() + DAY_MS);
  if (g === 'week') return new Date(start.getTime() + 7 * DAY_MS);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

/** The validated range: `from`..`to` (both included), at most MAX_RANGE_DAYS days. */
export function analyticsRange(query: AnalyticsQuery, now = new Date()) {
  const granularity = query.granularity ?? 'day';
  const to = query.to ? parseDay('to', query.to) : new Date(`${day(now)}T00:00:00Z`);
  const from = query.from
    ? parseDay('from', query.from)
    : new Date(to.getTime() - (DEFAULT_RANGE_DAYS - 1) * DAY_MS);
  if (from > to) throw new BadRequestError('query.from must not be after query.to');
  const days = Math.round((to.getTime() - from.getTime()) / DAY_MS) + 1;
  if (days > MAX_RANGE_DAYS)
    throw new BadRequestError(`the range covers ${days} days: at most ${MAX_RANGE_DAYS} days per request`);
  const buckets: Array<{ key: string; start: string; end: string }> = [];
  for (let s = periodStart(from, granularity); s <= to; s = nextPeriod(s, granularity)) {
    const last = new Date(nextPeriod(s, granularity).getTime() - DAY_MS);
    buckets.push({
      key: day(s),
      start: day(s < from ? from : s),
      end: day(last > to ? to : last),
    });
  }
  return { from: day(from), to: day(to), granularity, buckets };
}

function emptyPeriod(start: string, end: string): Period {
  return {
    start,
    end,
    uploads: { files: 0, versions: 0 },
    bytesUploaded: 0,
    bytesStored: 0,
    reports: { ready: 0, failed: 0 },
    averageQualityScore: null,
    scoredReports: 0,
    rulesFailed: 0,
    versionsWithSensitiveData: 0,
    filesWithSensitiveData: 0,
    comparisons: { ready: 0, withChanges: 0 },
    apiRequests: 0,
    webhookDeliveries: { succeeded: 0, failed: 0 },
    activePeople: 0,
  };
}

type Db = Knex | Knex.Transaction;

/** The company's analytics over the range (admins only: the route table says who may call). */
export async function companyAnalytics(actor: AnalyticsActor, db: Db, query: AnalyticsQuery) {
  const range = analyticsRange(query);
  const g = range.granularity;
  const bucketSql = `to_char(date_trunc('${g}', day::timestamp), 'YYYY-MM-DD')`;
  const [daily, activity, perKey, storedBefore, sensitiveFiles] = await Promise.all([
    AnalyticsDay.scoped(actor.companyId, db)
      .whereBetween('analyticsDaily.day', [range.from, range.to])
      .select(raw(`${bucketSql} as bucket`), 'metric', 'dimension', raw('sum(value)::float8 as total'))
      .groupByRaw('1, 2, 3') as unknown as Promise<
      Array<{ bucket: string; metric: string; dimension: string; total: number }>
    >,
    AnalyticsRequests.scoped(actor.companyId, db)
      .whereBetween('analyticsRequests.day', [range.from, range.to])
      .select(
        raw(`${bucketSql} as bucket`),
        raw('count(distinct person_id)::int as active'),
        raw(`coalesce(sum(requests) filter (where api_key_id <> ?), 0)::float8 as api`, [SESSION_KEY]),
      )
      .groupByRaw('1') as unknown as Promise<Array<{ bucket: string; active: number; api: number }>>,
    AnalyticsRequests.scoped(actor.companyId, db)
      .whereBetween('analyticsRequests.day', [range.from, range.to])
      .whereNot('analyticsRequests.apiKeyId', SESSION_KEY)
      .select(raw(`${bucketSql} as bucket`), 'apiKeyId', raw('sum(requests)::float8 as total'))
      .groupByRaw('1, 2') as unknown as Promise<Array<{ bucket: string; apiKeyId: string; total: number }>>,
    // the stored bytes at the start of the range: every change before it (the partial index's rows only)
    AnalyticsDay.scoped(actor.companyId, db)
      .whereRaw(`analytics_daily.metric = '${BYTES_STORED_CHANGE}'`)
      .where('analyticsDaily.day', '<', range.from)
      .select(raw('coalesce(sum(value), 0)::float8 as total'))
      .first() as unknown as Promise<{ total: number } | undefined>,
    // distinct files over a week's or a month's days; a day's count is a daily figure (sensitive_files_daily)
    g === 'day'
      ? Promise.resolve([] as Array<{ bucket: string; files: number }>)
      : (AnalyticsSensitiveFile.scoped(actor.companyId, db)
          .whereBetween('analyticsSensitiveFiles.day', [range.from, range.to])
          .select(raw(`${bucketSql} as bucket`), raw('count(distinct file_id)::int as files'))
          .groupByRaw('1') as unknown as Promise<Array<{ bucket: string; files: number }>>),
  ]);

  const index = new Map(range.buckets.map((b, i) => [b.key, i]));
  const periods = range.buckets.map((b) => emptyPeriod(b.start, b.end));
  const scoreSums = periods.map(() => 0);
  const ruleTotals = new Map<string, number>();
  const endpoints = new Map<string, { succeeded: number[]; failed: number[] }>();
  const series = () => periods.map(() => 0);
  const storedChanges = series();

  for (const row of daily) {
    const i = index.get(row.bucket);
    if (i === undefined) continue;
    const p = periods[i];
    const v = Number(row.total);
    switch (row.metric) {
      case 'files_uploaded':
        p.uploads.files += v;
        break;
      case 'versions_uploaded':
        p.uploads.versions += v;
        break;
      case 'bytes_uploaded':
        p.bytesUploaded += v;
        break;
      case BYTES_STORED_CHANGE:
        storedChanges[i] += v;
        break;
      case 'reports_ready':
        p.reports.ready += v;
        break;
      case 'reports_failed':
        p.reports.failed += v;
        break;
      case 'quality_score_sum':
        scoreSums[i] += v;
        break;
      case 'quality_score_count':
        p.scoredReports += v;
        break;
      case 'rule_failed':
        p.rulesFailed += v;
        ruleTotals.set(row.dimension, (ruleTotals.get(row.dimension) ?? 0) + v);
        break;
      case 'sensitive_versions':
        p.versionsWithSensitiveData += v;
        break;
      case 'sensitive_files_daily':
        if (g === 'day') p.filesWithSensitiveData += v;
        break;
      case 'comparisons_ready':
        p.comparisons.ready += v;
        break;
      case 'comparisons_changed':
        p.comparisons.withChanges += v;
        break;
      case 'deliveries_succeeded':
      case 'deliveries_failed': {
        let e = endpoints.get(row.dimension);
        if (!e) endpoints.set(row.dimension, (e = { succeeded: series(), failed: series() }));
        const ok = row.metric === 'deliveries_succeeded';
        (ok ? e.succeeded : e.failed)[i] += v;
        if (ok) p.webhookDeliveries.succeeded += v;
        else p.webhookDeliveries.failed += v;
        break;
      }
      default:
        break;
    }
  }
  let stored = Number(storedBefore?.total ?? 0);
  periods.forEach((p, i) => {
    stored += storedChanges[i];
    p.bytesStored = stored;
    p.averageQualityScore =
      p.scoredReports > 0 ? Math.round((scoreSums[i] / p.scoredReports) * 100) / 100 : null;
  });
  for (const row of activity) {
    const i = index.get(row.bucket);
    if (i === undefined) continue;
    periods[i].activePeople = Number(row.active);
    periods[i].apiRequests = Number(row.api);
  }
  for (const row of sensitiveFiles) {
    const i = index.get(row.bucket);
    if (i !== undefined) periods[i].filesWithSensitiveData = Number(row.files);
  }
  const keys = new Map<string, number[]>();
  for (const row of perKey) {
    const i = index.get(row.bucket);
    if (i === undefined) continue;
    let s = keys.get(row.apiKeyId);
    if (!s) keys.set(row.apiKeyId, (s = series()));
    s[i] += Number(row.total);
  }

  const topRules = [...ruleTotals.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, TOP_RULES);
  const [ruleRows, keyRows, endpointRows] = await Promise.all([
    topRules.length
      ? Rule.scoped(actor.companyId, db)
          .whereIn(
            'rules.id',
            topRules.map(([id]) => id),
          )
          .select('id', 'name')
      : Promise.resolve([] as Rule[]),
    keys.size
      ? ApiKey.scoped(actor.companyId, db)
          .whereIn('apiKeys.id', [...keys.keys()])
          .select('id', 'name', 'identifier')
      : Promise.resolve([] as ApiKey[]),
    endpoints.size
      ? WebhookEndpoint.scoped(actor.companyId, db)
          .whereIn('webhookEndpoints.id', [...endpoints.keys()])
          .select('id', 'name')
      : Promise.resolve([] as WebhookEndpoint[]),
  ]);
  const ruleNames = new Map(ruleRows.map((r) => [r.id, r.name]));
  const keyRowsById = new Map(keyRows.map((k) => [k.id, k]));
  const endpointNames = new Map(endpointRows.map((e) => [e.id, e.name]));
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

  return {
    from: range.from,
    to: range.to,
    granularity: g,
    periods,
    topFailedRules: topRules.map(([ruleId, failures]) => ({
      ruleId,
      name: ruleNames.get(ruleId) ?? null,
      failures,
    })),
    apiRequestsByKey: [...keys.entries()]
      .map(([apiKeyId, requests]) => {
        const k = keyRowsById.get(apiKeyId);
        return {
          apiKeyId,
          name: k?.name ?? null,
          prefix: k ? keyPrefix(k.identifier) : null,
          total: sum(requests),
          requests,
        };
      })
      .sort((a, b) => b.total - a.total || a.apiKeyId.localeCompare(b.apiKeyId)),
    webhookDeliveriesByEndpoint: [...endpoints.entries()]
      .map(([endpointId, e]) => ({
        endpointId,
        name: endpointNames.get(endpointId) ?? null,
        succeeded: e.succeeded,
        failed: e.failed,
      }))
      .sort((a, b) => a.endpointId.localeCompare(b.endpointId)),
  };
}
