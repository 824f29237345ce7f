import fs from 'node:fs/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { HostPolicy } from '../net/hostPolicy.ts';
import { policyConnector } from '../net/connector.ts';
import type { LfsStore } from '../lfs/lfsStore.ts';
import { scrubSecrets } from './gitErrors.ts';
import { guarded, readCapped } from './limits.ts';
import type { LfsPointer } from './lfsScan.ts';
import type { Credentials } from './url.ts';

/** An object the source could not give, and why. */
export interface MissingObject extends LfsPointer {
  error: string;
}

/** What a fetch needs. */
export interface LfsFetchOptions {
  url: URL;
  /** The LFS endpoint to use instead of the one guessed from `url` (the request's `lfs_url`). */
  endpoint?: string | null;
  credentials: Credentials | null;
  policy: HostPolicy;
  /** The store the objects are written to. */
  lfs: LfsStore;
  /**
   * A file of this job listing the oids it fetched and checked itself, one a line, so a
   * resumed job does not fetch them again. Objects the store holds for any other reason
   * are fetched all the same.
   */
  journal: string;
  /** A download or batch answer slower than 1 KiB/s over this long fails (ms). */
  stallMs: number;
  signal: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

const BATCH_SIZE = 100; // the batch API's customary limit per request
const PARALLEL = 4;
const MAX_REDIRECTS = 3;
const LFS_JSON = 'application/vnd.git-lfs+json';
/** The largest batch answer read: 100 objects need a few hundred KiB at most. */
export const MAX_BATCH_ANSWER = 16 * 1024 * 1024;
/** The largest error body read (for its message); the rest is dropped. */
const MAX_ERROR_BODY = 64 * 1024;

/** The LFS endpoint git-lfs would use for a clone URL (server discovery: `<repo>.git/info/lfs`, git:// becomes https://). */
export function lfsEndpoint(url: URL): string {
  // The URL setter cannot turn git: into https: (special and non-special schemes), so build it.
  const origin = url.protocol === 'git:' ? `https://${url.hostname}` : url.origin;
  const path = url.pathname.replace(/\/+$/, '');
  return `${origin}${path.endsWith('.git') ? path : `${path}.git`}/info/lfs`;
}

function basic(credentials: Credentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
}

/** A parsed JSON object (arrays included), whose fields may be missing or of any type. */
type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null;
}

/**
 * The objects of a batch answer by oid: those that are objects with a string oid (no other
 * could match a pointer); of two with one oid, the later.
 */
function offeredObjects(answer: unknown): Map<string, JsonObject> {
  const byOid = new Map<string, JsonObject>();
  const objects = isObject(answer) ? answer.objects : undefined;
  if (Array.isArray(objects)) for (const o of objects) if (isObject(o) && typeof o.oid === 'string') byOid.set(o.oid, o);
  return byOid;
}

/** The download action the batch answer offers for an object, if it has one. */
function downloadAction(entry: JsonObject | undefined): JsonObject | undefined {
  const actions = entry?.actions;
  const download = isObject(actions) ? actions.download : undefined;
  return isObject(download) ? download : undefined;
}

/** Why the source did not offer an object: its error's code and message (as far as it has them), or that it was not offered. */
function notOffered(entry: JsonObject | undefined): string {
  const e = entry?.error;
  if (!e) return 'not offered by the source';
  return isObject(e) ? `${e.code ?? ''} ${e.message ?? ''}`.trim() : '';
}

/** The oids a job has fetched and checked itself (its journal), empty when it has none yet. */
async function readJournal(file: string): Promise<Set<string>> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return new Set(text.split('\n').filter((l) => /^[0-9a-f]{64}$/.test(l)));
}

/**
 * Fetches LFS objects from the source's batch API (download, basic transfer, groups of
 * at most 100) into the store, each checked for size and SHA-256 while it streams.
 * SECURITY (SPEC §7.7): every object is fetched from the source, even one the store
 * already holds for another repository: knowing an oid must not link its bytes. Only
 * objects this job fetched itself (its journal) are skipped when it resumes. An object
 * the source cannot give is listed as missing, not fatal. Every connection, redirects
 * included, goes through the host policy.
 */
export async function fetchLfsObjects(pointers: LfsPointer[], options: LfsFetchOptions): Promise<{ stored: LfsPointer[]; missing: MissingObject[] }> {
  const stored: LfsPointer[] = [];
  const missing: MissingObject[] = [];
  const wanted: LfsPointer[] = [];
  const done = await readJournal(options.journal);
  for (const p of pointers) (done.has(p.oid) && (await options.lfs.size(p.oid)) === p.size ? stored : wanted).push(p);
  options.onProgress?.(stored.length, pointers.length);
  if (wanted.length === 0) return { stored, missing };
  const endpoint = (options.endpoint ?? lfsEndpoint(options.url)).replace(/\/+$/, '');
  const stall = options.stallMs;
  const dispatcher = new Agent({
    connect: policyConnector(options.policy, { timeout: Math.min(30_000, stall) }),
    allowH2: false,
    bodyTimeout: stall,
    headersTimeout: stall,
  });
  const scrub = (err: unknown) => scrubSecrets(String((err as Error)?.message ?? err), options.credentials).slice(0, 500);
  try {
    for (let i = 0; i < wanted.length; i += BATCH_SIZE) {
      const group = wanted.slice(i, i + BATCH_SIZE);
      let answer: unknown;
      try {
        answer = await batch(endpoint, group, options, dispatcher);
      } catch (err) {
        if (options.signal.aborted) throw err;
        const why = unreachable(endpoint, options.endpoint == null, scrub(err));
        for (const p of group) missing.push({ ...p, error: why });
        continue;
      }
      const byOid = offeredObjects(answer);
      const queue = [...group];
      const worker = async () => {
        for (let p = queue.shift(); p; p = queue.shift()) {
          const entry = byOid.get(p.oid);
          const action = downloadAction(entry);
          if (!action?.href) {
            missing.push({ ...p, error: notOffered(entry) });
            continue;
          }
          try {
            await download(String(action.href), action.header, endpoint, p, options, dispatcher);
            await fs.appendFile(options.journal, `${p.oid}\n`);
            stored.push(p);
          } catch (err) {
            if (options.signal.aborted) throw err;
            missing.push({ ...p, error: scrub(err) });
          }
          options.onProgress?.(stored.length + missing.length, pointers.length);
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
    }
  } finally {
    // Everything of this fetch is over: whatever a server still holds open is cut.
    await dispatcher.destroy().catch(() => {});
  }
  return { stored, missing };
}

/** An undici response body. */
type Body = Dispatcher.ResponseData['body'];

/**
 * Sends one request and returns its answer with its body made safe: an undici body
 * emits 'error' when it is destroyed before its end (RequestAbortedError) or when the
 * signal aborts, and an 'error' nobody listens to kills the process. The listener added
 * here swallows nothing a reader needs: readers (for await, pipeline) see the error themselves.
 */
async function safeRequest(
  url: string | URL,
  options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher },
): Promise<Dispatcher.ResponseData> {
  const res = await request(url, options);
  res.body.on('error', () => {});
  return res;
}

/** Drops a body nobody reads (a redirect's, an error's): its connection is closed, its error ignored. */
function discard(body: Body): void {
  body.on('error', () => {});
  if (!body.destroyed) body.destroy();
}

/**
 * Why a batch request failed, for someone who can fix it: the endpoint tried (never with
 * credentials: a guessed one is built from the URL's origin and path, a given one may hold
 * none), whether it was guessed, the system's reason, and the field that names another.
 */
function unreachable(endpoint: string, guessed: boolean, reason: string): string {
  return `the LFS endpoint ${endpoint}${guessed ? ' (guessed from the source URL)' : ''} failed: ${reason}. If the source serves LFS elsewhere, give its address in the import's "LFS endpoint" field (lfs_url; --lfs-url)`;
}

/** The parsed batch answer, not yet looked into. */
async function batch(endpoint: string, group: LfsPointer[], options: LfsFetchOptions, dispatcher: Dispatcher): Promise<unknown> {
  const headers: Record<string, string> = { accept: LFS_JSON, 'content-type': LFS_JSON };
  if (options.credentials) headers.authorization = basic(options.credentials);
  const res = await safeRequest(`${endpoint}/objects/batch`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ operation: 'download', transfers: ['basic'], objects: group.map(({ oid, size }) => ({ oid, size })) }),
    dispatcher,
    signal: options.signal,
  });
  if (res.statusCode !== 200) {
    // SECURITY: no redirect is followed; the batch endpoint is part of the checked source.
    if (res.statusCode >= 300 && res.statusCode < 400) {
      discard(res.body);
      throw new Error('the LFS endpoint answered with a redirect (not followed)');
    }
    const message = await errorMessage(res.body, options.stallMs);
    throw new Error(`the LFS batch API answered ${res.statusCode}${message ? `: ${message}` : ''}`);
  }
  // Read only up to the cap, however large the answer says (or does not say) it is.
  const text = await readCapped(guarded(res.body, options.stallMs, 'the LFS batch answer'), MAX_BATCH_ANSWER, 'the LFS batch answer').finally(() =>
    discard(res.body),
  );
  try {
    return JSON.parse(text);
  } catch {
    throw new Error('the LFS batch answer is not JSON');
  }
}

/**
 * The `message` of a git-lfs error body (read up to 64 KiB, under the same stall guard
 * as any other body), or '' when it has none, is too big, or stalls.
 */
async function errorMessage(body: Body, stallMs: number): Promise<string> {
  try {
    const parsed: unknown = JSON.parse(await readCapped(guarded(body, stallMs, 'the error answer'), MAX_ERROR_BODY, 'the error body'));
    return isObject(parsed) && typeof parsed.message === 'string' ? parsed.message.slice(0, 200) : '';
  } catch {
    return '';
  } finally {
    discard(body);
  }
}

/** Downloads one object from `href`; `header` is the action's `header` as the answer gave it (any JSON value), whose string fields are sent. */
async function download(href: string, header: unknown, endpoint: string, p: LfsPointer, options: LfsFetchOptions, dispatcher: Dispatcher): Promise<void> {
  let target = new URL(href, endpoint);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(header ?? {})) if (typeof v === 'string') headers[k.toLowerCase()] = v;
  // The source's credentials go only to the source's own origin.
  if (!headers.authorization && options.credentials && target.origin === new URL(endpoint).origin) headers.authorization = basic(options.credentials);
  for (let redirects = 0; ; redirects++) {
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`download URL protocol ${target.protocol} is not allowed`);
    const res = await safeRequest(target, { method: 'GET', headers, dispatcher, signal: options.signal });
    if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location !== undefined) {
      discard(res.body);
      if (redirects >= MAX_REDIRECTS) throw new Error(`download answered ${res.statusCode} after ${MAX_REDIRECTS} redirects (no more are followed)`);
      const next = new URL(String(res.headers.location), target);
      // SECURITY: a redirect target is connected to through the same policy connector;
      // credentials never follow a redirect to another origin.
      if (next.origin !== target.origin) delete headers.authorization;
      target = next;
      continue;
    }
    if (res.statusCode !== 200) {
      discard(res.body);
      throw new Error(`download answered ${res.statusCode}`);
    }
    // Checked while it streams: more than the pointer's size, a wrong SHA-256 or a stall stores nothing.
    try {
      await options.lfs.write(p.oid, p.size, guarded(res.body, options.stallMs, `the download of ${p.oid.slice(0, 12)}`));
    } finally {
      discard(res.body);
    }
    return;
  }
}
