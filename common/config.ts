import os from 'node:os';
import path from 'node:path';

/**
 * Configuration from environment variables, validated once at start.
 * Every variable is listed in README "Configuration"; a bad value stops the process with a message
 * that names the variable and what is wrong with it.
 */

export interface Config {
  env: string;
  /** NODE_ENV was set (unset means `development` for the defaults, but see serviceStartProblems) */
  envDeclared: boolean;
  /** ALLOW_DEVELOPMENT_DEFAULTS: a development machine without NODE_ENV (serviceStartProblems) */
  allowDevelopmentDefaults: boolean;
  host: string;
  port: number;
  logLevel: string;
  jsonBodyLimitBytes: number;
  /** The AI-agent endpoint (README "AI-agent endpoint"): the largest decoded file an upload tool takes. */
  mcp: { uploadMaxBytes: number };
  databaseUrl: string;
  databasePoolMax: number;
  /** the role the API and the worker act as (row-level security, db/rls.ts) */
  databaseAppRole: string;
  temporal: { address: string; namespace: string; taskQueue: string };
  s3: {
    endpoint: string;
    accessKey: string;
    secretKey: string;
    bucket: string;
    region: string;
    /** Key prefix for every object this process writes; lets test runs share a bucket. */
    prefix: string;
    /** Address that download links point at (what clients can reach); defaults to the endpoint. */
    publicEndpoint: string;
  };
  files: {
    /** Size of each part streamed to MinIO (multipart upload); also the most an upload holds in memory per part. */
    uploadPartBytes: number;
    /** Parts of one upload sent to MinIO at the same time. */
    uploadPartsInFlight: number;
    /** Rows and columns a sheet may have (CSV/TSV counted at upload, XLSX as the sheet declares). */
    maxRows: number;
    maxColumns: number;
    /** XLSX (a zip): limits checked on its directory before anything is decompressed. */
    xlsxMaxUnpackedBytes: number;
    xlsxMaxEntries: number;
    xlsxMaxCompressionRatio: number;
    /** XLSX shared strings: unpacked bytes of the part and strings it holds (400 at upload over either) */
    xlsxMaxSharedStringsBytes: number;
    xlsxMaxSharedStrings: number;
    /** Default life of a download link, in seconds. */
    downloadLinkTtlSeconds: number;
  };
  outbox: { batchSize: number; idleWaitMs: number };
  /** Report builds (README "Reports"): the analysis engine in the worker. */
  reports: {
    /** folder for the engine's temporary files (the CSV copy, DuckDB spill files); removed after each build */
    workDir: string;
    /** DuckDB threads of one build */
    threads: number;
    /** DuckDB memory limit of one build, in MB (aggregates and sorts above it spill to workDir) */
    memoryLimitMb: number;
    /** a result up to this size (JSON bytes) is kept in PostgreSQL; a larger one is an object in MinIO */
    inlineMaxBytes: number;
  };
  /** Comparisons (README "Comparisons"). */
  comparisons: {
    /**
     * how long a comparison waits for its two versions' reports to settle (ready or failed) so that it
     * takes their inferred types; after that it classifies the cells itself
     */
    reportWaitSeconds: number;
  };
  /** Master secret; purpose keys (tokens, cursors, key fingerprints, webhook secret encryption) derive from it. */
  secretKey: string;
  /** Public address of the API, used in e-mailed links and the OIDC redirect. */
  publicBaseUrl: string;
  /** Honour X-Forwarded-For from this many trusted proxy hops (0: use the socket address). */
  trustProxyHops: number;
  /** Failed sign-ins per account (e-mail address, known or not) allowed in a window, then 429 until it ends. */
  signIn: { failuresPerAccount: number; failureWindowSeconds: number };
  mail: { smtpUrl: string; from: string };
  google: { issuer: string; clientId: string; clientSecret: string };
  oauth: {
    /**
     * Front-end address the Google callback redirects to with `?code=` (or `?error=`); empty: the callback
     * answers JSON instead.
     */
    redirectAfter: string;
  };
  /** false: POST /demo/sessions answers 404 */
  demoEnabled: boolean;
  /** audit entries older than this many days are removed by the audit retention Schedule (30 to 3650) */
  auditRetentionDays: number;
  webhooks: {
    /** development only: allow http:// endpoint URLs */
    allowHttp: boolean;
    /** tests only: allow loopback/private targets (the default refuses them) */
    allowPrivateTargets: boolean;
    /** delay before the second attempt; each later delay is multiplied by backoffCoefficient */
    retryInitialMs: number;
    retryBackoffCoefficient: number;
    /** no delay between attempts grows beyond this */
    retryMaxIntervalMs: number;
    /** how long one attempt waits for the receiver's answer before it counts as failed */
    attemptTimeoutMs: number;
  };
}

/** The longest a download link lives: the cap of ?expiresIn and of DOWNLOAD_LINK_TTL_SECONDS (one hour). */
export const MAX_DOWNLOAD_LINK_SECONDS = 3600;

const DEV_SECRET = 'dev-only-secret-change-me-0123456789abcdef';

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  string(name: string, fallback: string): string {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    return raw;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw.trim())) {
      this.problems.push(`${name} must be a whole number between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    const value = Number(raw);
    if (value < min || value > max) {
      this.problems.push(`${name} must be between ${min} and ${max} (got ${value})`);
      return fallback;
    }
    return value;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
    this.problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.string(name, fallback);
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return raw as T;
  }

  url(name: string, fallback: string, protocols: readonly string[]): string {
    const raw = this.string(name, fallback);
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        this.problems.push(`${name} must use ${protocols.join(' or ')} (got "${parsed.protocol}")`);
      }
    } catch {
      this.problems.push(`${name} must be a URL (got "${raw}")`);
    }
    return raw;
  }

  /** A URL, or '' when unset. */
  optionalUrl(name: string, protocols: readonly string[]): string {
    const raw = this.string(name, '');
    return raw === '' ? '' : this.url(name, raw, protocols);
  }

  hostPort(name: string, fallback: string): string {
    const raw = this.string(name, fallback);
    if (!/^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/.test(raw)) {
      this.problems.push(`${name} must be host:port (got "${raw}")`);
    }
    return raw;
  }
}

/** The application role of row-level security (db/rls.ts), when DATABASE_APP_ROLE is not set. */
export const DEFAULT_APP_ROLE = 'dataservice_app';

export function loadConfig(env: Env = process.env): Config {
  const r = new Reader(env);
  const s3Endpoint = r.url('S3_ENDPOINT', 'http://127.0.0.1:9000', ['http:', 'https:']);
  const config: Config = {
    env: r.oneOf('NODE_ENV', 'development', ['development', 'test', 'production'] as const),
    envDeclared: (env.NODE_ENV ?? '') !== '',
    allowDevelopmentDefaults: r.bool('ALLOW_DEVELOPMENT_DEFAULTS', false),
    host: r.string('HOST', '127.0.0.1'),
    port: r.int('PORT', 3000, 0, 65535),
    logLevel: r.oneOf('LOG_LEVEL', 'info', [
      'fatal',
      'error',
      'warn',
      'info',
      'debug',
      'trace',
      'silent',
    ] as const),
    jsonBodyLimitBytes: r.int('JSON_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    mcp: { uploadMaxBytes: r.int('MCP_UPLOAD_MAX_BYTES', 10 * 1024 * 1024, 1, 25 * 1024 * 1024) },
    databaseUrl: r.url('DATABASE_URL', 'postgres://dataservice:dataservice@127.0.0.1:54329/dataservice', [
      'postgres:',
      'postgresql:',
    ]),
    databasePoolMax: r.int('DATABASE_POOL_MAX', 10, 1, 500),
    databaseAppRole: r.string('DATABASE_APP_ROLE', DEFAULT_APP_ROLE),
    temporal: {
      address: r.hostPort('TEMPORAL_ADDRESS', '127.0.0.1:7233'),
      namespace: r.string('TEMPORAL_NAMESPACE', 'default'),
      taskQueue: r.string('TEMPORAL_TASK_QUEUE', 'data-service'),
    },
    s3: {
      endpoint: s3Endpoint,
      accessKey: r.string('S3_ACCESS_KEY', 'dataservice'),
      secretKey: r.string('S3_SECRET_KEY', 'dataservice-secret'),
      bucket: r.string('S3_BUCKET', 'dataservice'),
      region: r.string('S3_REGION', 'us-east-1'),
      prefix: r.string('S3_PREFIX', ''),
      publicEndpoint: r.url('S3_PUBLIC_ENDPOINT', s3Endpoint, ['http:', 'https:']),
    },
    files: {
      uploadPartBytes: r.int('UPLOAD_PART_BYTES', 5 * 1024 * 1024, 5 * 1024 * 1024, 64 * 1024 * 1024),
      uploadPartsInFlight: r.int('UPLOAD_PARTS_IN_FLIGHT', 2, 1, 8),
      maxRows: r.int('FILE_MAX_ROWS', 1_048_576, 1, 100_000_000),
      maxColumns: r.int('FILE_MAX_COLUMNS', 1024, 1, 16_384),
      xlsxMaxUnpackedBytes: r.int('XLSX_MAX_UNPACKED_BYTES', 400 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
      xlsxMaxEntries: r.int('XLSX_MAX_ENTRIES', 1000, 1, 65_535),
      xlsxMaxCompressionRatio: r.int('XLSX_MAX_COMPRESSION_RATIO', 100, 2, 10_000),
      xlsxMaxSharedStringsBytes: r.int(
        'XLSX_MAX_SHARED_STRINGS_BYTES',
        32 * 1024 * 1024,
        1024,
        1024 * 1024 * 1024,
      ),
      xlsxMaxSharedStrings: r.int('XLSX_MAX_SHARED_STRINGS', 1_000_000, 1, 100_000_000),
      downloadLinkTtlSeconds: r.int('DOWNLOAD_LINK_TTL_SECONDS', 300, 1, MAX_DOWNLOAD_LINK_SECONDS),
    },
    outbox: {
      batchSize: r.int('OUTBOX_BATCH_SIZE', 100, 1, 1000),
      idleWaitMs: r.int('OUTBOX_IDLE_WAIT_MS', 10_000, 100, 60_000),
    },
    reports: {
      workDir: r.string('REPORT_WORK_DIR', path.join(os.tmpdir(), 'dataservice-reports')),
      threads: r.int('REPORT_THREADS', 2, 1, 64),
      memoryLimitMb: r.int('REPORT_MEMORY_LIMIT_MB', 512, 64, 65_536),
      inlineMaxBytes: r.int('REPORT_INLINE_MAX_BYTES', 256 * 1024, 1024, 64 * 1024 * 1024),
    },
    comparisons: {
      reportWaitSeconds: r.int('COMPARISON_REPORT_WAIT_SECONDS', 600, 0, 86_400),
    },
    secretKey: r.string('SECRET_KEY', DEV_SECRET),
    publicBaseUrl: r.url('PUBLIC_BASE_URL', 'http://127.0.0.1:3000', ['http:', 'https:']),
    trustProxyHops: r.int('TRUST_PROXY_HOPS', 0, 0, 10),
    signIn: {
      failuresPerAccount: r.int('SIGN_IN_FAILURES_PER_ACCOUNT', 10, 1, 1000),
      failureWindowSeconds: r.int('SIGN_IN_FAILURE_WINDOW_SECONDS', 900, 60, 86_400),
    },
    mail: {
      smtpUrl: r.url('SMTP_URL', 'smtp://127.0.0.1:2525', ['smtp:', 'smtps:']),
      from: r.string('MAIL_FROM', 'Data Service <no-reply@dataservice.local>'),
    },
    google: {
      issuer: r.url('GOOGLE_OIDC_ISSUER', 'https://accounts.google.com', ['http:', 'https:']),
      clientId: r.string('GOOGLE_CLIENT_ID', ''),
      clientSecret: r.string('GOOGLE_CLIENT_SECRET', ''),
    },
    oauth: {
      redirectAfter: r.optionalUrl('OAUTH_REDIRECT_AFTER', ['http:', 'https:']),
    },
    demoEnabled: r.bool('DEMO_ENABLED', true),
    auditRetentionDays: r.int('AUDIT_RETENTION_DAYS', 365, 30, 3650),
    webhooks: {
      allowHttp: r.bool('WEBHOOK_ALLOW_HTTP', false),
      allowPrivateTargets: r.bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
      retryInitialMs: r.int('WEBHOOK_RETRY_INITIAL_MS', 5_000, 10, 3_600_000),
      retryBackoffCoefficient: r.int('WEBHOOK_RETRY_BACKOFF_COEFFICIENT', 3, 1, 10),
      retryMaxIntervalMs: r.int('WEBHOOK_RETRY_MAX_INTERVAL_MS', 600_000, 10, 86_400_000),
      attemptTimeoutMs: r.int('WEBHOOK_ATTEMPT_TIMEOUT_MS', 10_000, 100, 120_000),
    },
  };
  if (config.env === 'production' && config.secretKey === DEV_SECRET) {
    r.problems.push('SECRET_KEY must be set in production (at least 32 characters)');
  }
  if (config.secretKey.length < 32) r.problems.push('SECRET_KEY must have at least 32 characters');
  if (config.env === 'production' && config.allowDevelopmentDefaults) {
    r.problems.push('ALLOW_DEVELOPMENT_DEFAULTS cannot be used in production');
  }
  if (config.env === 'production' && (config.webhooks.allowPrivateTargets || config.webhooks.allowHttp)) {
    r.problems.push('WEBHOOK_ALLOW_PRIVATE_TARGETS and WEBHOOK_ALLOW_HTTP cannot be used in production');
  }
  if (config.env === 'production' && config.google.clientId && !config.google.issuer.startsWith('https:')) {
    r.problems.push('GOOGLE_OIDC_ISSUER must use https: in production');
  }
  if (config.google.clientId && !config.google.clientSecret) {
    r.problems.push('GOOGLE_CLIENT_SECRET must be set when GOOGLE_CLIENT_ID is set');
  }
  if (config.s3.prefix && !/^[A-Za-z0-9._\-/]+\/$/.test(config.s3.prefix)) {
    r.problems.push(
      `S3_PREFIX must be letters, digits, ".", "_", "-" or "/" and end with "/" (got "${config.s3.prefix}")`,
    );
  }
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(config.databaseAppRole)) {
    r.problems.push(`DATABASE_APP_ROLE must be a lower-case role name (got "${config.databaseAppRole}")`);
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/**
 * What stops the API or the worker from starting beyond `loadConfig`'s checks (fails closed): when
 * NODE_ENV is not set, the process may be a production one that forgot it, so the built-in development
 * SECRET_KEY and the webhook development/test settings are refused — unless ALLOW_DEVELOPMENT_DEFAULTS=true
 * says this is a development machine (scripts/start.sh sets it when NODE_ENV is unset). Production refuses
 * them in `loadConfig`, whatever the flag.
 */
export function serviceStartProblems(config: Config): string[] {
  if (config.envDeclared || config.allowDevelopmentDefaults) return [];
  const problems: string[] = [];
  const hint =
    'set NODE_ENV (production, development or test), or ALLOW_DEVELOPMENT_DEFAULTS=true on a development machine';
  if (config.secretKey === DEV_SECRET)
    problems.push(
      `NODE_ENV is not set and SECRET_KEY is the built-in development value: set SECRET_KEY, or ${hint}`,
    );
  if (config.webhooks.allowPrivateTargets)
    problems.push(`NODE_ENV is not set: WEBHOOK_ALLOW_PRIVATE_TARGETS (tests only) is refused; ${hint}`);
  if (config.webhooks.allowHttp)
    problems.push(`NODE_ENV is not set: WEBHOOK_ALLOW_HTTP (development only) is refused; ${hint}`);
  return problems;
}
