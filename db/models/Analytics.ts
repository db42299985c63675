import { KeyedTenantModel } from './base';

/**
 * Daily rollups of a company (analytics_daily, db/migrations/20261123001300_analytics.ts): one counter per
 * UTC day, metric and dimension (a rule id, an endpoint id or '').
 */
export class AnalyticsDay extends KeyedTenantModel {
  static override tableName = 'analytics_daily';
  static override idColumn = ['companyId', 'day', 'metric', 'dimension'];

  day!: string;
  metric!: string;
  dimension!: string;
  value!: string | number;
}

/** Authenticated requests per UTC day, person and API key (the nil UUID for a session). */
export class AnalyticsRequests extends KeyedTenantModel {
  static override tableName = 'analytics_requests';
  static override idColumn = ['companyId', 'day', 'personId', 'apiKeyId'];

  day!: string;
  personId!: string;
  apiKeyId!: string;
  requests!: string | number;
}

/**
 * The files whose report flagged personal or secret data, one row per company, UTC day and file
 * (analytics_sensitive_files, db/migrations/20261128000100_analytics_bytes_stored_sensitive_files.ts): a
 * period counts its distinct files.
 */
export class AnalyticsSensitiveFile extends KeyedTenantModel {
  static override tableName = 'analytics_sensitive_files';
  static override idColumn = ['companyId', 'day', 'fileId'];

  day!: string;
  fileId!: string;
}
