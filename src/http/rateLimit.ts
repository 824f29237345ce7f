import type { Context, Next } from 'koa';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Services } from '../services.ts';
import type { Quota } from '../config.ts';
import { isPostgres, type Db } from '../db/connect.ts';
import { nodeId } from '../work/nodeId.ts';
import { periodicWorker } from '../work/periodic.ts';
import type { WorkerFactory } from '../work/worker.ts';
import { rateLimited } from './errors.ts';
import { requestToken, tokenUser } from './auth.ts';

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
    // Not each limiter of each node every 5 minutes: one node a period sweeps them all (rateLimitSweeper).
    clearExpiredByTimeout: false,
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
 * Counts one attempt against the client's address, for a route outside the counted paths
 * that checks a token itself (the web UI's sign-in); throws a 429 over the quota, whatever
 * the token, so a form past its limit tells nothing of the tokens tried on it.
 */
export type ChargeRequest = () => Promise<void>;

/**
 * The rate limit of SPEC §2 as a middleware for the paths `applies` picks. Before anything
 * else runs, the request's credentials are looked up: a valid token counts against its
 * user (all their tokens share one quota, as on GitHub); no credentials, or credentials
 * that match no live token, count against the client's address, so made-up tokens buy no
 * extra requests and leave no row of their own. Other paths get `ctx.state.chargeRequest`,
 * which counts against the address alone, where they check a token themselves. Null when
 * RATE_LIMIT is off.
 */
export function rateLimit(services: Services, applies: (path: string) => boolean) {
  const limits = services.config.rateLimit;
  if (!limits) return null;
  const byUser = limiterFor(services, 'user', limits.token);
  const byAddress = limiterFor(services, 'address', limits.anonymous);
  // Counting must never turn a request into a 5xx: with the store down, the request goes through.
  const safely = async (counting: Promise<Counted>): Promise<Counted | null> =>
    counting.catch((err) => (services.log.warn({ err }, 'rate limit not counted'), null));

  async function charge(ctx: Context, token: string | undefined): Promise<void> {
    const user = token ? await tokenUser(ctx, services.db, token) : null;
    await chargeAs(ctx, user?.id ?? null);
  }

  async function chargeAs(ctx: Context, userId: number | null): Promise<void> {
    // Keyed by user id or address only: nothing a client makes up becomes a key.
    const counted = await safely(userId !== null ? count(byUser, limits!.token, String(userId)) : count(byAddress, limits!.anonymous, ctx.ip));
    if (counted) apply(ctx, counted);
  }

  return async function limitRate(ctx: Context, next: Next) {
    if (!applies(ctx.path)) {
      ctx.state.chargeRequest = (() => chargeAs(ctx, null)) satisfies ChargeRequest;
      return next();
    }
    await charge(ctx, requestToken(ctx.get('authorization')));
    await next();
  };
}

/** Rows are kept this long past the end of their window before a sweep deletes them (as the store's own sweep did). */
const SWEEP_AFTER_MS = 3_600_000;

/** Deletes the rate-limit rows whose window ended before `before`; returns how many went. */
export async function sweepRateLimits(db: Db, before: number): Promise<number> {
  return db('rate_limits').where('expire', '<', before).delete();
}

/**
 * On Postgres, deletes expired rate-limit rows every RATE_LIMIT_SWEEP_EVERY on one node of
 * all of them (a turn of `periodic_jobs`); nothing to do on SQLite (counted in memory) or
 * with RATE_LIMIT off.
 */
export const rateLimitSweeper: WorkerFactory = ({ db, config, log }) => {
  if (!config.rateLimit || !isPostgres(db)) return { start: async () => {}, stop: async () => {} };
  return periodicWorker({
    db,
    job: 'sweep_rate_limits',
    node: nodeId(config.dataDir),
    everyMs: config.rateLimitSweepEveryMs,
    log,
    async run(turnAt) {
      // Every pass, even one that found nothing: a line a period says sweeping runs, and on which node.
      log.info({ rows: await sweepRateLimits(db, Date.now() - SWEEP_AFTER_MS), turnAt }, 'swept expired rate limits');
    },
  });
};
