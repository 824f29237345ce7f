import os from 'node:os';
import path from 'node:path';
import { parseDuration } from './util/duration.ts';
import { parseHostPolicy, type HostPolicy } from './net/hostPolicy.ts';

/** The typed, validated configuration of one Wharf process. */
export interface Config {
  host: string;
  port: number;
  baseUrl: string;
  dataDir: string;
  databaseUrl: string;
  reposDir: string;
  lfsDir: string;
  /** LFS_STORE: where LFS objects' bytes are kept: the file system (LFS_DIR) or an S3-compatible bucket. */
  lfsStore: 'fs' | 's3';
  /** The bucket's settings (S3_*), read when LFS_STORE=s3; undefined otherwise. */
  s3: S3Settings | undefined;
  /** LFS_DOWNLOAD_EXPIRES: how long a presigned download address handed out by the batch API stays valid. */
  lfsDownloadExpiresMs: number;
  webhookAllowedHosts: HostPolicy;
  importAllowedHosts: HostPolicy;
  webhookRetrySchedule: number[];
  webhookTimeoutMs: number;
  webhookConcurrency: number;
  deliverySourceAddress: string | undefined;
  deliverySourceRanges: string[];
  deliveryRetentionMs: number;
  /** DELIVERY_PRUNE_EVERY: how often finished deliveries past retention are pruned (by one node of all of them). */
  deliveryPruneEveryMs: number;
  /** WEBHOOK_PAUSE_AFTER: failed attempts in a row after which a webhook is paused (SPEC §5.5). */
  webhookPauseAfter: number;
  /** WEBHOOK_DISABLE_AFTER: how long a webhook stays paused before it is deactivated. */
  webhookDisableAfterMs: number;
  /** WEBHOOK_PROBE_AFTER: the wait before a paused webhook's first probe (then doubling, at most an hour). */
  webhookProbeAfterMs: number;
  importConcurrency: number;
  importTimeoutMs: number;
  gitBackendConcurrency: number;
  /** GIT_IDLE_TIMEOUT: most time a Git or LFS answer may have bytes waiting that its client does not read; then it is cut and its backend's slot freed. */
  gitIdleTimeoutMs: number;
  /** How long an import phase may go without progress (below 1 KiB/s on average) before it fails. */
  importStallTimeoutMs: number;
  logLevel: string;
  /**
   * SECRET_KEY: the 32-byte key that seals webhook secrets and import credentials at rest.
   * Unset in the environment, start-up (src/secrets/boot.ts) fills it in from DATA_DIR.
   */
  secretKey: Buffer | undefined;
  /** Requests allowed per token and per anonymous client address (SPEC §2); null when RATE_LIMIT=off. */
  rateLimit: RateLimits | null;
  /** RATE_LIMIT_SWEEP_EVERY: how often expired rate-limit rows are deleted on Postgres (by one node of all of them). */
  rateLimitSweepEveryMs: number;
  /** How long a node's claim on a push record lasts without renewal before another node takes it over. */
  pushLeaseMs: number;
  /** REQUEST_HEADERS_TIMEOUT: most time to receive a request's headers (Node's `headersTimeout`). */
  requestHeadersTimeoutMs: number;
  /** REQUEST_IDLE_TIMEOUT: most time any request body (JSON, form, LFS upload, Git) may go without a byte. */
  requestIdleTimeoutMs: number;
  /** REQUEST_BODY_TIMEOUT: most time to receive a body read whole (JSON, forms, a fetch negotiation), however it trickles. */
  requestBodyTimeoutMs: number;
  /** REQUEST_TIMEOUT: most time to receive any whole request, pushes and LFS uploads included (Node's `requestTimeout`). */
  requestTimeoutMs: number;
  /**
   * Check every API answer against the schema its route declares (a mismatch is logged and
   * becomes a 500). No environment variable sets it: the test server turns it on.
   */
  validateResponses: boolean;
  /** The shortest push mirror interval accepted (1m, SPEC §8.1.2). No environment variable sets it: tests shorten it. */
  pushMirrorMinIntervalMs: number;
}

/** An S3-compatible bucket for LFS objects (LFS_STORE=s3). The secret key is never logged nor shown in any message or answer. */
export interface S3Settings {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  /** S3_CREATE_BUCKET: create the bucket at start when it is missing (operators usually create it, with its policy). */
  createBucket: boolean;
}

/** So many requests per window. */
export interface Quota {
  points: number;
  durationMs: number;
}

/** The two quotas of RATE_LIMIT: per token, and per anonymous client address. */
export interface RateLimits {
  token: Quota;
  anonymous: Quota;
}

/** Raised when an environment variable holds a value Wharf cannot use. Stops start-up (one line naming the variable); never reaches a request. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function integer(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value)) throw new ConfigError(name, `expected a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new ConfigError(name, `expected ${min}..${max}, got ${n}`);
  return n;
}

function hostPolicy(name: string, value: string): HostPolicy {
  try {
    return parseHostPolicy(list(value));
  } catch (err) {
    throw new ConfigError(name, (err as Error).message);
  }
}

function duration(name: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw new ConfigError(name, `expected a duration such as 30s, 5m, 6h or 30d, got "${value}"`);
  return ms;
}

/** A duration of at least 100 ms and at most a week: a deadline of zero would refuse everything, and Node's timers stop at 24.8 days. */
function positiveDuration(name: string, value: string): number {
  const ms = duration(name, value);
  if (ms < 100 || ms > 7 * 86_400_000) throw new ConfigError(name, `expected 100ms..7d, got "${value}"`);
  return ms;
}

/** Reads RATE_LIMIT: `off`, or `<token quota>[,<anonymous quota>]`, each `<requests>/<window>` such as 5000/1h. */
function rateLimits(value: string): RateLimits | null {
  if (value === 'off') return null;
  const quotas = list(value).map((item) => {
    const m = /^(\d{1,9})\/(\S+)$/.exec(item);
    const durationMs = m ? parseDuration(m[2]) : undefined;
    // The window is counted in whole seconds; a request quota of 0 would refuse everything.
    if (!m || Number(m[1]) < 1 || durationMs === undefined || durationMs < 1000 || durationMs % 1000 !== 0 || durationMs > 366 * 86_400_000) {
      throw new ConfigError(
        'RATE_LIMIT',
        `expected off or <requests>/<window>[,<requests>/<window>] for token,anonymous (e.g. 5000/1h,1000/1h), got "${value}"`,
      );
    }
    return { points: Number(m[1]), durationMs };
  });
  if (quotas.length < 1 || quotas.length > 2) throw new ConfigError('RATE_LIMIT', `expected one or two quotas (token,anonymous), got "${value}"`);
  return { token: quotas[0], anonymous: quotas[1] ?? quotas[0] };
}

function boolean(name: string, value: string): boolean {
  if (/^(true|1|yes|on)$/i.test(value)) return true;
  if (/^(false|0|no|off)$/i.test(value)) return false;
  throw new ConfigError(name, `expected true or false, got "${value}"`);
}

/** Reads the S3_* settings LFS_STORE=s3 needs; a missing one is named. Values of the keys are never echoed. */
function s3Settings(get: (name: string, fallback: string) => string): S3Settings {
  const required = (name: string) => {
    const value = get(name, '');
    if (value === '') throw new ConfigError(name, 'required with LFS_STORE=s3');
    return value;
  };
  const endpoint = required('S3_ENDPOINT').replace(/\/+$/, '');
  try {
    const u = new URL(endpoint);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    if (u.username || u.password) throw new ConfigError('S3_ENDPOINT', 'must not hold credentials (use S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY)');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError('S3_ENDPOINT', `expected an http(s) URL, got "${endpoint}"`);
  }
  const bucket = required('S3_BUCKET');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError('S3_BUCKET', `expected a bucket name (3 to 63 of a-z, 0-9, . and -), got "${bucket}"`);
  return {
    endpoint,
    bucket,
    region: get('S3_REGION', 'us-east-1'),
    accessKeyId: required('S3_ACCESS_KEY_ID'),
    secretAccessKey: required('S3_SECRET_ACCESS_KEY'),
    forcePathStyle: boolean('S3_FORCE_PATH_STYLE', get('S3_FORCE_PATH_STYLE', 'true')),
    createBucket: boolean('S3_CREATE_BUCKET', get('S3_CREATE_BUCKET', 'false')),
  };
}

/** Builds the configuration from an environment (process.env by default); throws ConfigError on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const get = (name: string, fallback: string) => (env[name] === undefined || env[name] === '' ? fallback : env[name]!);
  const host = get('HOST', '127.0.0.1');
  const port = integer('PORT', get('PORT', '3000'), 0, 65535);
  const dataDir = path.resolve(get('DATA_DIR', './data'));
  const baseUrl = get('BASE_URL', `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  try {
    const u = new URL(baseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError('BASE_URL', `expected an http(s) URL, got "${baseUrl}"`);
  }
  const databaseUrl = get('DATABASE_URL', `sqlite:${path.join(dataDir, 'wharf.sqlite')}`);
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'expected sqlite:<path> or postgres://…');
  }
  const schedule = list(get('WEBHOOK_RETRY_SCHEDULE', '0s,1m,5m,30m')).map((v) => duration('WEBHOOK_RETRY_SCHEDULE', v));
  if (schedule.length === 0 || schedule.length > 20) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', 'expected 1 to 20 delays');
  const logLevel = get('LOG_LEVEL', 'info');
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}`);
  const sourceAddress = env.DELIVERY_SOURCE_ADDRESS || undefined;
  if (sourceAddress !== undefined && !/^[0-9a-fA-F:.]+$/.test(sourceAddress)) {
    throw new ConfigError('DELIVERY_SOURCE_ADDRESS', `expected an IP address, got "${sourceAddress}"`);
  }
  const secretKeyText = env.SECRET_KEY || undefined;
  // The value is never echoed: it is the key.
  if (secretKeyText !== undefined && !/^[0-9a-fA-F]{64}$/.test(secretKeyText)) {
    throw new ConfigError('SECRET_KEY', `expected 64 hexadecimal characters (32 bytes), got ${secretKeyText.length} characters`);
  }
  const webhookTimeoutMs = duration('WEBHOOK_TIMEOUT', get('WEBHOOK_TIMEOUT', '10s'));
  const requestHeadersTimeoutMs = positiveDuration('REQUEST_HEADERS_TIMEOUT', get('REQUEST_HEADERS_TIMEOUT', '30s'));
  const requestTimeoutMs = positiveDuration('REQUEST_TIMEOUT', get('REQUEST_TIMEOUT', '6h'));
  // Node refuses a headers deadline longer than the whole request's.
  if (requestTimeoutMs < requestHeadersTimeoutMs) throw new ConfigError('REQUEST_TIMEOUT', 'must be at least REQUEST_HEADERS_TIMEOUT');
  if (webhookTimeoutMs <= 0) throw new ConfigError('WEBHOOK_TIMEOUT', 'must be more than zero');
  const lfsStore = get('LFS_STORE', 'fs');
  if (lfsStore !== 'fs' && lfsStore !== 's3') throw new ConfigError('LFS_STORE', `expected fs or s3, got "${lfsStore}"`);
  const lfsDownloadExpiresMs = duration('LFS_DOWNLOAD_EXPIRES', get('LFS_DOWNLOAD_EXPIRES', '15m'));
  // S3's presigned addresses last from a second to 7 days.
  if (lfsDownloadExpiresMs < 1000 || lfsDownloadExpiresMs > 7 * 86_400_000) throw new ConfigError('LFS_DOWNLOAD_EXPIRES', 'expected 1s..7d');
  return {
    host,
    port,
    baseUrl,
    dataDir,
    databaseUrl,
    reposDir: path.resolve(get('REPOS_DIR', './repos')),
    lfsDir: path.resolve(get('LFS_DIR', path.join(dataDir, 'lfs'))),
    lfsStore,
    s3: lfsStore === 's3' ? s3Settings(get) : undefined,
    lfsDownloadExpiresMs,
    webhookAllowedHosts: hostPolicy('WEBHOOK_ALLOWED_HOSTS', get('WEBHOOK_ALLOWED_HOSTS', 'external')),
    importAllowedHosts: hostPolicy('IMPORT_ALLOWED_HOSTS', get('IMPORT_ALLOWED_HOSTS', 'external')),
    webhookRetrySchedule: schedule,
    webhookTimeoutMs,
    webhookConcurrency: integer('WEBHOOK_CONCURRENCY', get('WEBHOOK_CONCURRENCY', '64'), 1, 10000),
    deliverySourceAddress: sourceAddress,
    deliverySourceRanges: list(get('DELIVERY_SOURCE_RANGES', '203.0.113.0/24,198.51.100.0/24')),
    deliveryRetentionMs: duration('DELIVERY_RETENTION', get('DELIVERY_RETENTION', '30d')),
    deliveryPruneEveryMs: positiveDuration('DELIVERY_PRUNE_EVERY', get('DELIVERY_PRUNE_EVERY', '10m')),
    webhookPauseAfter: integer('WEBHOOK_PAUSE_AFTER', get('WEBHOOK_PAUSE_AFTER', '20'), 1, 1_000_000),
    webhookDisableAfterMs: positiveDuration('WEBHOOK_DISABLE_AFTER', get('WEBHOOK_DISABLE_AFTER', '5d')),
    webhookProbeAfterMs: positiveDuration('WEBHOOK_PROBE_AFTER', get('WEBHOOK_PROBE_AFTER', '1m')),
    importConcurrency: integer('IMPORT_CONCURRENCY', get('IMPORT_CONCURRENCY', '2'), 1, 100),
    importTimeoutMs: duration('IMPORT_TIMEOUT', get('IMPORT_TIMEOUT', '6h')),
    gitBackendConcurrency: integer('GIT_BACKEND_CONCURRENCY', get('GIT_BACKEND_CONCURRENCY', String(Math.max(4, 2 * os.availableParallelism()))), 1, 1000),
    gitIdleTimeoutMs: positiveDuration('GIT_IDLE_TIMEOUT', get('GIT_IDLE_TIMEOUT', '60s')),
    importStallTimeoutMs: duration('IMPORT_STALL_TIMEOUT', get('IMPORT_STALL_TIMEOUT', '2m')),
    logLevel,
    secretKey: secretKeyText === undefined ? undefined : Buffer.from(secretKeyText, 'hex'),
    rateLimit: rateLimits(get('RATE_LIMIT', '5000/1h,1000/1h')),
    rateLimitSweepEveryMs: positiveDuration('RATE_LIMIT_SWEEP_EVERY', get('RATE_LIMIT_SWEEP_EVERY', '5m')),
    pushLeaseMs: duration('PUSH_LEASE', get('PUSH_LEASE', '30s')),
    requestHeadersTimeoutMs,
    requestIdleTimeoutMs: positiveDuration('REQUEST_IDLE_TIMEOUT', get('REQUEST_IDLE_TIMEOUT', '30s')),
    requestBodyTimeoutMs: positiveDuration('REQUEST_BODY_TIMEOUT', get('REQUEST_BODY_TIMEOUT', '2m')),
    requestTimeoutMs,
    validateResponses: false,
    pushMirrorMinIntervalMs: 60_000,
    ...overrides,
  };
}

/**
 * Whether this process was started by `npm run` with npm's banner on: npm writes
 * `> wharf@… wharf` to stdout before the command's own output (only `--silent` or
 * `--loglevel=silent` turns it off), so `TOKEN=$(npm run wharf -- token create …)` would
 * capture it too.
 */
export function npmBannerOnStdout(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.npm_command === 'run' && env.npm_lifecycle_event !== undefined && env.npm_config_loglevel !== 'silent';
}
