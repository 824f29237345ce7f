import type Koa from 'koa';
import type { Context, Next } from 'koa';
import type { Services } from '../../services.ts';
import { notFound } from '../../errors/wharfError.ts';
import { lfsRoutes } from '../lfs/routes.ts';
import { authorizeRepo } from './access.ts';
import { runHttpBackend } from './cgi.ts';
import { BackendSlots, readNegotiation } from './backendLimits.ts';
import { readWhole } from '../../http/deadlines.ts';
import { MIRROR_CUTOVER_VARIABLE, MIRROR_OF_VARIABLE, PUSH_LOG_VARIABLE, writeHooksDir } from './hooks.ts';
import fs from 'node:fs/promises';
import { findMirror } from '../../pullMirrors/state.ts';
import { newPushLog, preparePushLogs, pushTipsFile, pushWalkDir } from '../../pushes/log.ts';
import { landPush } from '../../pushes/land.ts';
import { createOnFirstPush } from '../../domain/firstPush.ts';
import { GIT_SERVICES, parseGitPath, type GitPath } from '../gitPath.ts';
import { asksForPack, relayAvailable } from './packRelay.ts';

/** The service and access level of a smart-HTTP request, or null for anything else. */
function gitService(ctx: Context, target: GitPath): { service: string; level: 'read' | 'write' } | null {
  if (target.rest === 'info/refs' && ctx.method === 'GET') {
    const service = String(ctx.query.service ?? '');
    // Only the smart protocol is served; a dumb client gets a 404.
    return GIT_SERVICES.has(service) ? { service, level: service === 'git-receive-pack' ? 'write' : 'read' } : null;
  }
  if (GIT_SERVICES.has(target.rest) && ctx.method === 'POST') return { service: target.rest, level: target.rest === 'git-receive-pack' ? 'write' : 'read' };
  return null;
}

/** The Koa mount for Git smart HTTP (through `git http-backend`) and the LFS API beneath it. */
export function gitMount(app: Koa, services: Services): void {
  // Written once at start; every backend run points core.hooksPath at it, and the hook reports through a push log.
  const hooksReady = Promise.all([writeHooksDir(services.config.dataDir), preparePushLogs(services.config.dataDir)]).then(([dir]) => dir);
  hooksReady.catch((err) => services.log.error({ err }, 'could not write the git hooks directory'));
  const lfs = lfsRoutes(services);
  // Asked once at start: whether a pack answer can go to its client through a relay (packRelay.ts).
  const relaying = relayAvailable();
  // Backends running at once in this process; more requests wait for a slot (CPU and memory stay bounded).
  const slots = new BackendSlots(services.config.gitBackendConcurrency);
  app.use(async function smartHttp(ctx: Context, next: Next) {
    const target = parseGitPath(ctx.path);
    if (!target) return next();
    if (target.rest.startsWith('info/lfs/')) return lfs(ctx, target);
    const op = gitService(ctx, target);
    if (!op) throw notFound('Not a Git smart-HTTP path');
    // Route templates: the service is one of two, never a label from the raw path.
    ctx._matchedRoute = ctx.method === 'GET' ? `/:org/:repo/info/refs?service=${op.service}` : `/:org/:repo/${op.service}`;
    const creating = op.service === 'git-receive-pack';
    // Only a push the backend will take creates a repository: a wrong content type would be refused after the creation.
    const pushable = ctx.method === 'GET' || ctx.get('content-type') === 'application/x-git-receive-pack-request';
    const access = await authorizeRepo(services, ctx, target, op.level, { create: creating && pushable });
    // Push to create: access allowed this first push to make its repository; it is made here, as a step of its own, before the backend runs.
    const repo = 'id' in access ? access : await createOnFirstPush(services, access.org, access.name, access.user);
    const user = ctx.state.user ?? null;
    const short = ctx.method === 'POST' && creating ? await readShortBody(ctx) : undefined;
    if (creating && short?.equals(FLUSH_PKT) && ctx.get('content-type') === 'application/x-git-receive-pack-request') return answerProbe(ctx);
    const push = ctx.method === 'POST' && creating ? newPushLog(services.config.dataDir) : undefined;
    const gitProtocol = ctx.get('git-protocol');
    const env: Record<string, string> = {
      GIT_PROJECT_ROOT: services.config.reposDir,
      // Built from the stored names, never from the request path, so nothing can walk out of REPOS_DIR.
      PATH_INFO: `/${repo.org}/${repo.name}.git/${target.rest}`,
      REQUEST_METHOD: ctx.method,
      QUERY_STRING: ctx.querystring,
      CONTENT_TYPE: ctx.get('content-type'),
      GIT_HTTP_EXPORT_ALL: '1',
      REMOTE_USER: user?.login ?? '',
      REMOTE_ADDR: ctx.ip,
    };
    if (ctx.get('content-length')) env.CONTENT_LENGTH = ctx.get('content-length');
    if (ctx.get('content-encoding')) env.HTTP_CONTENT_ENCODING = ctx.get('content-encoding');
    if (/^[A-Za-z0-9=:.,_-]{1,256}$/.test(gitProtocol)) env.GIT_PROTOCOL = env.HTTP_GIT_PROTOCOL = gitProtocol;
    if (push) env[PUSH_LOG_VARIABLE] = push;
    const mirror = push ? await findMirror(services.db, repo.id) : undefined;
    if (mirror) {
      // Refused by the pre-receive hook, naming the source (SPEC §8.1.1); nothing lands.
      env[MIRROR_OF_VARIABLE] = mirror.sourceUrl;
      env[MIRROR_CUTOVER_VARIABLE] = `DELETE ${services.config.baseUrl}/api/v1/repos/${repo.org}/${repo.name}/mirror`;
    }
    // A fetch negotiation is read whole before it may take a backend slot: a client that stalls holds none.
    const negotiation = ctx.method === 'POST' && !creating ? await readNegotiation(ctx, env) : undefined;
    await runHttpBackend(ctx, {
      hooksDir: await hooksReady,
      env,
      log: services.log,
      onExit: () =>
        push
          ? landPush(services, { repository: repo, pusherId: user?.id ?? null, pushLog: push })
              .catch((err) => {
                // The push cannot be promised: the answer is cut short, so git reports a failure rather than a success.
                services.log.error({ err, request_id: ctx.state.requestId }, 'could not store a push record; the push answer is cut off');
                ctx.req.socket.destroy();
              })
              // Not waited for: the answer ends first (its tips are written, or never will be: cgi.ts).
              .finally(() => void removeWalk(push))
          : Promise.resolve(),
      body: short ?? negotiation,
      slots,
      // Anonymous clients together hold at most half the slots, so signed-in clients always have the rest.
      anonymousAddress: user ? undefined : ctx.ip,
      idleMs: services.config.gitIdleTimeoutMs,
      tipsFile: push ? pushTipsFile(push) : undefined,
      relay: negotiation !== undefined && asksForPack(negotiation) && (await relaying),
    });
  });
}

/** Removes a push's tips file and early walk (hooks.ts) once its backend has exited; nothing in them is promised. */
function removeWalk(push: string): Promise<void> {
  return Promise.all([fs.rm(pushTipsFile(push), { force: true }), fs.rm(pushWalkDir(push), { recursive: true, force: true })]).then(
    () => undefined,
    () => undefined,
  );
}

/** A lone flush packet: a request with nothing in it. */
const FLUSH_PKT = Buffer.from('0000');

/** The body of a request that declares at most 4 bytes (and no encoding), read whole under the body deadlines; undefined for any other. */
async function readShortBody(ctx: Context): Promise<Buffer | undefined> {
  const length = ctx.get('content-length');
  if (!/^[0-4]$/.test(length) || ctx.get('content-encoding')) return undefined;
  return readWhole(ctx, 4);
}

/**
 * Answers git's probe: before streaming a push too big to resend (over http.postBuffer),
 * git POSTs a lone flush packet to check its credentials. It asks for nothing, so it is
 * answered here, as the backend would answer it (200, the result type, no body), without
 * starting the backend for it. The credentials were checked already.
 */
function answerProbe(ctx: Context): void {
  ctx.status = 200;
  ctx.set({
    'Content-Type': 'application/x-git-receive-pack-result',
    Expires: 'Fri, 01 Jan 1980 00:00:00 GMT',
    Pragma: 'no-cache',
    'Cache-Control': 'no-cache, max-age=0, must-revalidate',
  });
  ctx.body = '';
}
