import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import type { GitPath } from '../gitPath.ts';
import type { Repository } from '../../domain/repos.ts';
import { authorizeRepo } from '../git/access.ts';
import { jsonBody } from '../../http/body.ts';
import { idleLimited } from '../../http/deadlines.ts';
import { compile } from '../../http/validate.ts';
import { badRequest, conflict, notFound, validationFailed, WharfError } from '../../errors/wharfError.ts';
import { classify } from '../../http/classify.ts';
import { answerBatch, parseBatch } from './batch.ts';
import { LfsIntegrityError } from '../../lfs/lfsStore.ts';
import { linkObject, repositoryHasObject } from '../../lfs/links.ts';
import { cutStalledAnswer } from '../../http/deadlines.ts';

const LFS_TYPE = 'application/vnd.git-lfs+json';
/** git-lfs reads LFS-Authenticate to know which credentials to send. */
const LFS_CHALLENGE = { 'LFS-Authenticate': 'Basic realm="Wharf"', 'WWW-Authenticate': 'Basic realm="Wharf"' };

/** The fixed paths under `info/lfs/` that have routes (objects by oid aside). */
const LFS_PATHS = new Set(['objects/batch', 'verify', 'locks', 'locks/verify']);

const parseVerify = compile({
  type: 'object',
  required: ['oid', 'size'],
  properties: { oid: { type: 'string', pattern: '^[0-9a-f]{64}$' }, size: { type: 'integer', minimum: 0 } },
} as const);

/** Reads a JSON (git-lfs+json) body through the shared parser, limits included. */
async function readJson(ctx: Context): Promise<unknown> {
  await jsonBody()(ctx, async () => {});
  return ctx.request.body;
}

type Level = 'read' | 'write';

/** POST objects/batch: where each object is to be downloaded from or uploaded to (basic transfer). */
async function batch(services: Services, ctx: Context, repoFor: (level: Level) => Promise<Repository>): Promise<void> {
  const { db, config, lfs } = services;
  const request = parseBatch(await readJson(ctx));
  if (request.hash_algo && request.hash_algo !== 'sha256') throw conflict('Only sha256 is supported');
  const repo = await repoFor(request.operation === 'upload' ? 'write' : 'read');
  const base = `${config.baseUrl}/${repo.org}/${repo.name}.git/info/lfs`;
  const authorization = ctx.get('authorization');
  const objects = await answerBatch(db, lfs, repo.id, request.operation, request.objects, {
    objectHref: (oid) => `${base}/objects/${oid}`,
    verifyHref: `${base}/verify`,
    header: authorization ? { Authorization: authorization } : {},
  });
  ctx.type = LFS_TYPE;
  ctx.body = { transfer: 'basic', objects, hash_algo: 'sha256' };
}

/** PUT objects/<oid>: stores an upload, streamed into the store and checked against its oid and size, then links it to the repository. */
async function upload(services: Services, ctx: Context, repo: Repository, oid: string): Promise<void> {
  const { db, lfs } = services;
  const length = ctx.get('content-length');
  if (!/^\d{1,15}$/.test(length)) throw new WharfError('length_required', 'Content-Length is required');
  try {
    // Streamed into the store as it comes; an upload that stalls is a 408 (src/http/deadlines.ts).
    await lfs.write(oid, Number(length), idleLimited(ctx));
  } catch (err) {
    if (err instanceof WharfError) throw err;
    if (err instanceof LfsIntegrityError)
      throw validationFailed([{ path: '/', message: err.message }], 'The content does not match its oid and size; nothing was stored');
    if (ctx.req.destroyed || ctx.req.readableAborted) throw badRequest('The upload was interrupted; nothing was stored');
    throw err;
  }
  await linkObject(db, repo.id, oid, Number(length));
  ctx.status = 200;
  ctx.body = '';
}

/**
 * The LFS API under `/<org>/<repo>.git/info/lfs/` (SPEC §11): batch, basic transfer
 * (GET download, PUT upload, POST verify) and an empty locks API so `git lfs push`
 * raises no warning. Errors carry git-lfs's `message` beside SPEC §4's `error`.
 */
export function lfsRoutes(services: Services) {
  const { db, config, lfs } = services;
  const repoFor = (ctx: Context, target: GitPath, level: 'read' | 'write') => authorizeRepo(services, ctx, target, level, { challenge: LFS_CHALLENGE });

  async function route(ctx: Context, target: GitPath): Promise<void> {
    const path = target.rest.slice('info/lfs/'.length);
    const object = /^objects\/([0-9a-f]{64})$/.exec(path);
    // A route template, never the raw path: a label per path would grow /metrics without bound.
    const template = object ? 'objects/:oid' : LFS_PATHS.has(path) ? path : undefined;
    if (template) ctx._matchedRoute = `/:org/:repo/info/lfs/${template}`;
    if (path === 'objects/batch' && ctx.method === 'POST') {
      await batch(services, ctx, (level) => repoFor(ctx, target, level));
    } else if (object && ctx.method === 'GET') {
      const repo = await repoFor(ctx, target, 'read');
      const oid = object[1];
      const size = (await repositoryHasObject(db, repo.id, oid)) ? await lfs.size(oid) : null;
      if (size === null) throw notFound('Object does not exist');
      ctx.type = 'application/octet-stream';
      ctx.length = size;
      ctx.body = await lfs.open(oid);
      // A client that stops reading the object holds its stream and connection no longer than GIT_IDLE_TIMEOUT.
      cutStalledAnswer(ctx, config.gitIdleTimeoutMs);
    } else if (object && ctx.method === 'PUT') {
      await upload(services, ctx, await repoFor(ctx, target, 'write'), object[1]);
    } else if (path === 'verify' && ctx.method === 'POST') {
      const { oid, size } = parseVerify(await readJson(ctx));
      const repo = await repoFor(ctx, target, 'write');
      const stored = (await repositoryHasObject(db, repo.id, oid)) ? await lfs.size(oid) : null;
      if (stored === null) throw notFound('Object does not exist');
      if (stored !== size) throw validationFailed([{ path: '/size', message: `the object has ${stored} bytes` }], 'Size mismatch');
      ctx.type = LFS_TYPE;
      ctx.body = { message: 'ok' };
    } else if (path === 'locks/verify' && ctx.method === 'POST') {
      await repoFor(ctx, target, 'write');
      ctx.type = LFS_TYPE;
      ctx.body = { ours: [], theirs: [], next_cursor: '' };
    } else if (path === 'locks' && ctx.method === 'GET') {
      await repoFor(ctx, target, 'read');
      ctx.type = LFS_TYPE;
      ctx.body = { locks: [], next_cursor: '' };
    } else {
      throw notFound('Not an LFS API path (file locking is not supported)');
    }
  }

  return async function lfs(ctx: Context, target: GitPath): Promise<void> {
    try {
      await route(ctx, target);
    } catch (err) {
      // git-lfs reads `message`; `error` is SPEC §4's object, as on the API.
      const e = classify(err);
      if (e.status >= 500) services.log.error({ err, request_id: ctx.state.requestId }, 'LFS request failed');
      ctx.status = e.status;
      for (const [name, value] of Object.entries(e.headers)) ctx.set(name, value);
      ctx.type = LFS_TYPE;
      ctx.body = { message: e.message, request_id: ctx.state.requestId, error: { code: e.code, message: e.message, details: e.details } };
    }
  };
}
