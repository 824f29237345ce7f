import { PassThrough, Transform, pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import PQueue from 'p-queue';
import ipaddr from 'ipaddr.js';
import type { Context } from 'koa';
import { promisify } from 'node:util';
import { badRequest, rateLimited, WharfError } from '../../errors/wharfError.ts';
import { errorCode } from '../../errors/thrown.ts';
import { idleLimited, readWhole } from '../../http/deadlines.ts';

/** A request body for the backend: the stream it reads, and a promise settled only if reading it must stop (over the cap, bad gzip). */
export interface RequestBody {
  stream: Readable;
  failed: Promise<Error>;
}

/**
 * Most bytes a gzip-encoded request body may inflate to, and most compressed bytes read.
 * git gzips only fetch requests small enough to send in one piece (under http.postBuffer),
 * and http-backend itself refuses a plain request body over 10 MiB
 * (GIT_HTTP_MAX_REQUEST_BUFFER), so nothing git sends comes near it; a gzip bomb stops here.
 */
export const INFLATED_BODY_LIMIT = 10 * 1024 * 1024;

/** Raised when one anonymous client address already has too many Git requests waiting. */
export const tooManyAtOnce = () => rateLimited(5, 'Too many Git requests at once from this address');

/**
 * The key an anonymous client is counted under: its IPv4 address, or the /64 of an IPv6
 * one (one host is usually given a whole /64, so its addresses are one client).
 */
export function anonymousKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts;
  return `${parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}

/** One anonymous address's share: slots it holds or queues for, and its requests waiting behind them. */
interface AddressShare {
  entered: number;
  waiting: Array<(release: Promise<() => void>) => void>;
}

/**
 * Limits how many `git http-backend` processes run at once; requests over it wait their
 * turn. Anonymous requests, all addresses together, hold or queue for at most half of the
 * slots (at least one), so signed-in clients always have the rest, however many addresses
 * anonymous clients come from; one anonymous address (an IPv6 /64, anonymousKey) may take
 * that whole half while no other waits. Anonymous requests over it wait; a place given
 * back goes to the waiting address that holds the fewest (the first in line among equals),
 * so addresses take turns; one address's further requests wait behind its own (at most
 * `waitingPerAddress`, then a 429).
 */
export class BackendSlots {
  private readonly queue: PQueue;
  private readonly shares = new Map<string, AddressShare>();
  /** Addresses with requests waiting, in the order they take turns. */
  private readonly turns: string[] = [];
  private anonymousEntered = 0;
  /** Slots all anonymous requests together may hold or queue for. */
  readonly anonymousLimit: number;
  readonly waitingPerAddress: number;
  constructor(readonly limit: number) {
    this.queue = new PQueue({ concurrency: limit });
    this.anonymousLimit = Math.max(1, Math.floor(limit / 2));
    this.waitingPerAddress = 4 * limit;
  }

  /** Slots this address holds or queues for now. */
  entered(address: string): number {
    return this.shares.get(anonymousKey(address))?.entered ?? 0;
  }

  /**
   * Resolves, once a slot is free, with the function that gives it back (idempotent).
   * `anonymousAddress` is the client address of a request without credentials.
   */
  acquire(anonymousAddress?: string): Promise<() => void> {
    if (anonymousAddress === undefined) return this.enter(undefined);
    const key = anonymousKey(anonymousAddress);
    const share = this.shares.get(key) ?? { entered: 0, waiting: [] };
    this.shares.set(key, share);
    if (this.anonymousEntered < this.anonymousLimit && share.waiting.length === 0 && this.turns.length === 0) {
      share.entered++;
      this.anonymousEntered++;
      return this.enter(key);
    }
    if (share.waiting.length >= this.waitingPerAddress) return Promise.reject(tooManyAtOnce());
    return new Promise((resolve) => {
      share.waiting.push(resolve);
      if (share.waiting.length === 1) this.turns.push(key);
    });
  }

  /** Queues for a slot; when given back, the next anonymous request waiting takes the anonymous place. */
  private enter(key: string | undefined): Promise<() => void> {
    return new Promise((granted) => {
      void this.queue.add(
        () =>
          new Promise<void>((release) => {
            let given = false;
            granted(() => {
              if (given) return;
              given = true;
              release();
              if (key !== undefined) this.leave(key);
            });
          }),
      );
    });
  }

  private leave(key: string): void {
    const share = this.shares.get(key)!;
    share.entered--;
    this.anonymousEntered--;
    if (share.entered === 0 && share.waiting.length === 0) this.shares.delete(key);
    // The waiting address holding the fewest slots goes next (the first in line among
    // equals), then to the back of the line if it still waits.
    if (this.turns.length === 0) return;
    let pick = 0;
    for (let i = 1; i < this.turns.length; i++) if (this.shares.get(this.turns[i])!.entered < this.shares.get(this.turns[pick])!.entered) pick = i;
    const [next] = this.turns.splice(pick, 1);
    const waiting = this.shares.get(next)!;
    const admit = waiting.waiting.shift()!;
    waiting.entered++;
    this.anonymousEntered++;
    if (waiting.waiting.length > 0) this.turns.push(next);
    admit(this.enter(next));
  }
}

const gunzip = promisify(zlib.gunzip);

/** Raised for a plain fetch negotiation over the backend's own limit. */
const plainTooLarge = () => new WharfError('payload_too_large', `Request body is over its limit (${INFLATED_BODY_LIMIT / 1024 / 1024} MiB)`);

/** Raised while reading a request body that is over INFLATED_BODY_LIMIT. */
const tooLarge = () => new WharfError('payload_too_large', `Compressed request body is over its limit (${INFLATED_BODY_LIMIT / 1024 / 1024} MiB inflated)`);

/** Passes bytes on until `limit` have gone through, then fails with a 413. */
function capped(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      // Nothing past the limit is passed on, so the backend never sees more than its own 10 MiB buffer.
      if (seen > limit) done(tooLarge());
      else done(null, chunk);
    },
  });
}

/**
 * The request body as the backend must read it. A gzip body (what git sends for larger
 * fetch requests) is inflated here, at most INFLATED_BODY_LIMIT bytes, rather than by
 * http-backend, which inflates without a bound. The CGI environment is changed to match:
 * no encoding, no length (http-backend then reads to the end).
 */
export function requestBody(ctx: Context, env: Record<string, string>): RequestBody {
  // A body that sends nothing for REQUEST_IDLE_TIMEOUT fails with a 408 (src/http/deadlines.ts).
  const source = idleLimited(ctx);
  const encoding = (env.HTTP_CONTENT_ENCODING ?? '').trim().toLowerCase();
  if (encoding !== 'gzip' && encoding !== 'x-gzip') return { stream: source, failed: new Promise((resolve) => source.on('error', resolve)) };
  delete env.HTTP_CONTENT_ENCODING;
  delete env.CONTENT_LENGTH;
  const out = new PassThrough();
  const failed = new Promise<Error>((resolve) => {
    // SECURITY: both sides are capped: the inflated bytes, and the compressed ones (empty deflate blocks inflate to nothing).
    pipeline(source, capped(INFLATED_BODY_LIMIT), zlib.createGunzip(), capped(INFLATED_BODY_LIMIT), out, (err) => {
      if (!err) return;
      // The request itself stays open for the answer; the rest of it is read and dropped.
      ctx.req.unpipe();
      ctx.req.resume();
      resolve(err instanceof WharfError ? err : badRequest('Request body is not valid gzip'));
    });
  });
  return { stream: out, failed };
}

/**
 * A fetch negotiation (upload-pack) body, read whole under REQUEST_IDLE_TIMEOUT and
 * REQUEST_BODY_TIMEOUT before it may take a backend slot, so a client that stalls holds
 * none; at most INFLATED_BODY_LIMIT bytes, compressed and inflated (a gzip body is inflated
 * here). The CGI environment is changed to match: no encoding, the real length.
 */
export async function readNegotiation(ctx: Context, env: Record<string, string>): Promise<Buffer> {
  const encoding = (env.HTTP_CONTENT_ENCODING ?? '').trim().toLowerCase();
  const gzip = encoding === 'gzip' || encoding === 'x-gzip';
  let body: Buffer;
  try {
    body = await readWhole(ctx, INFLATED_BODY_LIMIT);
  } catch (err) {
    if (err instanceof WharfError && err.code === 'payload_too_large') throw gzip ? tooLarge() : plainTooLarge();
    throw err;
  }
  if (gzip) {
    try {
      body = await gunzip(body, { maxOutputLength: INFLATED_BODY_LIMIT });
    } catch (err) {
      throw errorCode(err) === 'ERR_BUFFER_TOO_LARGE' ? tooLarge() : badRequest('Request body is not valid gzip');
    }
    delete env.HTTP_CONTENT_ENCODING;
  }
  env.CONTENT_LENGTH = String(body.length);
  return body;
}
