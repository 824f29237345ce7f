import { Agent, request, type Dispatcher } from 'undici';
import type { HostPolicy } from '../net/hostPolicy.ts';
import { policyConnector } from '../net/connector.ts';
import type { LfsStore } from '../lfs/lfsStore.ts';
import { guarded, readCapped } from '../remote/limits.ts';
import type { LfsPointer } from '../remote/lfsScan.ts';
import type { Credentials } from '../remote/url.ts';

/** What an upload needs. */
export interface LfsUploadOptions {
  /** The remote's LFS endpoint (`<url>.git/info/lfs`). */
  endpoint: string;
  credentials: Credentials | null;
  policy: HostPolicy;
  /** The store the objects are read from. */
  lfs: LfsStore;
  /** A batch answer or transfer slower than 1 KiB/s over this long fails (ms). */
  stallMs: number;
  signal: AbortSignal;
}

/** Raised when the remote's LFS API refuses or fails; the message is safe to show once scrubbed of credentials. */
export class LfsUploadError extends Error {
  override name = 'LfsUploadError';
}

const BATCH_SIZE = 100;
const PARALLEL = 4;
const LFS_JSON = 'application/vnd.git-lfs+json';
const MAX_BATCH_ANSWER = 16 * 1024 * 1024;
const MAX_ERROR_BODY = 64 * 1024;

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null;

function basic(credentials: Credentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
}

/** A request whose body can never raise an unhandled 'error'. */
async function send(url: string | URL, options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher }) {
  const res = await request(url, options);
  res.body.on('error', () => {});
  return res;
}

/** Reads an answer's body up to a cap (for an error's words) and drops the rest. */
async function bodyText(body: Dispatcher.ResponseData['body'], stallMs: number, cap = MAX_ERROR_BODY): Promise<string> {
  try {
    return await readCapped(guarded(body, stallMs, 'the LFS answer'), cap, 'the LFS answer');
  } catch {
    return '';
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

/** The `message` of a git-lfs error body, or ''. */
function messageOf(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) && typeof parsed.message === 'string' ? `: ${parsed.message.slice(0, 200)}` : '';
  } catch {
    return '';
  }
}

/**
 * Uploads LFS objects from Wharf's store to a remote through the git-lfs batch API
 * (`upload` operation, basic transfer: PUT, then `verify` when offered), in groups of 100.
 * Objects the remote already has come back without actions and are not sent. Any refusal
 * (a batch error, a per-object error, a failed PUT or verify) fails the whole upload:
 * the refs are pushed only after every object they need is there (git-lfs's own order).
 * Every connection goes through the host policy; no redirect is followed; the credentials
 * go only to the endpoint's own origin. Returns how many objects were sent.
 */
export async function uploadLfsObjects(pointers: LfsPointer[], options: LfsUploadOptions): Promise<number> {
  if (pointers.length === 0) return 0;
  const endpoint = options.endpoint.replace(/\/+$/, '');
  const stall = options.stallMs;
  const dispatcher = new Agent({
    connect: policyConnector(options.policy, { timeout: Math.min(30_000, stall) }),
    allowH2: false,
    bodyTimeout: stall,
    headersTimeout: stall,
  });
  let sent = 0;
  try {
    for (let i = 0; i < pointers.length; i += BATCH_SIZE) {
      const group = pointers.slice(i, i + BATCH_SIZE);
      const objects = await batch(endpoint, group, options, dispatcher);
      const queue = [...group];
      const worker = async () => {
        for (let p = queue.shift(); p; p = queue.shift()) {
          const entry = objects.get(p.oid);
          if (!entry) throw new LfsUploadError(`the remote's LFS batch answer left out object ${p.oid}`);
          if (isObject(entry.error)) {
            throw new LfsUploadError(
              `the remote refused LFS object ${p.oid}: ${String(entry.error.code ?? '')} ${String(entry.error.message ?? '').slice(0, 200)}`.trim(),
            );
          }
          const actions = isObject(entry.actions) ? entry.actions : {};
          if (!isObject(actions.upload)) continue; // the remote has it
          await put(p, actions.upload, endpoint, options, dispatcher);
          if (isObject(actions.verify)) await verify(p, actions.verify, endpoint, options, dispatcher);
          sent++;
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
    }
  } finally {
    await dispatcher.destroy().catch(() => {});
  }
  return sent;
}

/** Headers of an action (its string fields), with the credentials added for the endpoint's own origin only. */
function actionHeaders(action: JsonObject, target: URL, endpoint: string, options: LfsUploadOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(isObject(action.header) ? action.header : {})) if (typeof v === 'string') headers[k.toLowerCase()] = v;
  if (!headers.authorization && options.credentials && target.origin === new URL(endpoint).origin) headers.authorization = basic(options.credentials);
  return headers;
}

function actionTarget(action: JsonObject, endpoint: string): URL {
  if (typeof action.href !== 'string') throw new LfsUploadError('the remote offered an LFS action without an href');
  const target = new URL(action.href, endpoint);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new LfsUploadError(`LFS action URL protocol ${target.protocol} is not allowed`);
  return target;
}

/** The batch answer's objects by oid. */
async function batch(endpoint: string, group: LfsPointer[], options: LfsUploadOptions, dispatcher: Dispatcher): Promise<Map<string, JsonObject>> {
  const headers: Record<string, string> = { accept: LFS_JSON, 'content-type': LFS_JSON };
  if (options.credentials) headers.authorization = basic(options.credentials);
  const res = await send(`${endpoint}/objects/batch`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ operation: 'upload', transfers: ['basic'], objects: group.map(({ oid, size }) => ({ oid, size })), hash_algo: 'sha256' }),
    dispatcher,
    signal: options.signal,
  });
  if (res.statusCode !== 200) {
    const text = await bodyText(res.body, options.stallMs);
    // SECURITY: no redirect is followed; the batch endpoint is part of the checked remote.
    if (res.statusCode >= 300 && res.statusCode < 400) throw new LfsUploadError('the remote LFS endpoint answered with a redirect (not followed)');
    throw new LfsUploadError(`the remote LFS batch API answered ${res.statusCode}${messageOf(text)}`);
  }
  const text = await readCapped(guarded(res.body, options.stallMs, 'the LFS batch answer'), MAX_BATCH_ANSWER, 'the LFS batch answer').finally(() => {
    if (!res.body.destroyed) res.body.destroy();
  });
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new LfsUploadError('the remote LFS batch answer is not JSON');
  }
  const byOid = new Map<string, JsonObject>();
  const objects = isObject(answer) ? answer.objects : undefined;
  if (Array.isArray(objects)) for (const o of objects) if (isObject(o) && typeof o.oid === 'string') byOid.set(o.oid, o);
  return byOid;
}

/** PUTs one object's bytes from the store (basic transfer). */
async function put(p: LfsPointer, action: JsonObject, endpoint: string, options: LfsUploadOptions, dispatcher: Dispatcher): Promise<void> {
  const target = actionTarget(action, endpoint);
  const headers = { ...actionHeaders(action, target, endpoint, options), 'content-type': 'application/octet-stream', 'content-length': String(p.size) };
  const body = await options.lfs.open(p.oid);
  body.on('error', () => {}); // surfaces as the request's failure
  const res = await send(target, { method: 'PUT', headers, body, dispatcher, signal: options.signal });
  const text = await bodyText(res.body, options.stallMs);
  if (res.statusCode < 200 || res.statusCode >= 300) throw new LfsUploadError(`the upload of LFS object ${p.oid} answered ${res.statusCode}${messageOf(text)}`);
}

/** Asks the remote to confirm it holds the object (the `verify` action). */
async function verify(p: LfsPointer, action: JsonObject, endpoint: string, options: LfsUploadOptions, dispatcher: Dispatcher): Promise<void> {
  const target = actionTarget(action, endpoint);
  const headers = { ...actionHeaders(action, target, endpoint, options), accept: LFS_JSON, 'content-type': LFS_JSON };
  const res = await send(target, { method: 'POST', headers, body: JSON.stringify({ oid: p.oid, size: p.size }), dispatcher, signal: options.signal });
  const text = await bodyText(res.body, options.stallMs);
  if (res.statusCode < 200 || res.statusCode >= 300)
    throw new LfsUploadError(`the remote did not verify LFS object ${p.oid}: ${res.statusCode}${messageOf(text)}`);
}
