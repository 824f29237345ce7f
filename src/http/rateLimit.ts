import { createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Services } from '../services.ts';
import type { Quota } from '../config.ts';
import { isPostgres } from '../db/connect.ts';
import { requestToken } from '../git/access.ts';
import { HttpError, rateLimited } from './errors.ts';

/** One counted request: whose quota it used, what is left of it, and whether it is over. */
interface Counted {
  quota: Quota;
  result: RateLimiterRes;
  refused: boolean;
}

/** A limiter of one quota: shared through the database on Postgres, in this process on SQLite (one process serves it). */
function limiterFor(services: Services, prefix: string, quota: Quota): RateLimiterAbstract {
  const options = { keyPrefix: prefix, points: quota.points, duration: quota.durationMs / 1000 };
  if (!isPostgres(services.db)) return new RateLimiterMemory(options);
  return new RateLimiterPostgres({
    ...options,
    storeClient: services.db,
    storeType: 'knex',
    tableName: 'rate_limits',
    // The table comes from a migration: no DDL at run time.
    tableCreated: true,
    // A key over its quota stays refused from memory until its window ends: an abusive client costs no query.
    inMemoryBlockOnConsumed: quota.points + 1,
    // While the database cannot be reached, each process counts on its own rather than failing requests.
    insuranceLimiter: new RateLimiterMemory(options),
  });
}

/** Counts one request against a key; a refusal resolves too (over the quota), a store failure rejects. */
async function count(limiter: RateLimiterAbstract, quota: Quota, key: string): Promise<Counted> {
  try {
    return { quota, result: await limiter.consume(key), refused: false };
  } catch (err) {
    // A key blocked in memory is refused with a result that counts nothing: the refusal itself is the answer.
    if (err instanceof RateLimiterRes) return { quota, result: err, refused: true };
    throw err;
  }
}

/** Sets the X-RateLimit-* headers GitHub sends, and refuses with 429 once the quota is spent. */
function apply(ctx: Context, { quota, result, refused }: Counted): void {
  const resetMs = Date.now() + Math.max(result.msBeforeNext, 0);
  ctx.set('X-RateLimit-Limit', String(quota.points));
  ctx.set('X-RateLimit-Remaining', String(result.remainingPoints));
  ctx.set('X-RateLimit-Used', String(refused ? quota.points : result.consumedPoints));
  ctx.set('X-RateLimit-Reset', String(Math.ceil(resetMs / 1000)));
  if (refused) throw rateLimited(Math.max(1, Math.ceil(result.msBeforeNext / 1000)));
}

/**
 * The rate limit of SPEC §2 as a middleware for the paths `applies` picks: a request with
 * credentials counts against its token, one without against its client address. A
 * request whose credentials are refused (401) counts against its address as well, so
 * made-up tokens buy no extra requests. Null when RATE_LIMIT is off.
 */
export function rateLimit(services: Services, applies: (path: string) => boolean) {
  const limits = services.config.rateLimit;
  if (!limits) return null;
  const byToken = limiterFor(services, 'token', limits.token);
  const byAddress = limiterFor(services, 'address', limits.anonymous);
  // Counting must never turn a request into a 5xx: with the store down, the request goes through.
  const safely = async (counting: Promise<Counted>): Promise<Counted | null> =>
    counting.catch((err) => (services.log.warn({ err }, 'rate limit not counted'), null));

  return async function limitRate(ctx: Context, next: Next) {
    if (!applies(ctx.path)) return next();
    const token = requestToken(ctx.get('authorization'));
    // Keyed by a hash of the token (never the token itself), one other than the stored token hash.
    const key = token ? createHash('sha256').update(`rate-limit:${token}`).digest('hex') : ctx.ip;
    const counted = await safely(token ? count(byToken, limits.token, key) : count(byAddress, limits.anonymous, key));
    if (counted) apply(ctx, counted);
    const chargeAddress = async () => {
      const charged = await safely(count(byAddress, limits.anonymous, ctx.ip));
      if (charged?.refused) apply(ctx, charged);
    };
    try {
      await next();
    } catch (err) {
      if (token && err instanceof HttpError && err.status === 401) await chargeAddress();
      throw err;
    }
    // The LFS API answers its own errors rather than throwing them.
    if (token && ctx.status === 401) await chargeAddress();
  };
}
