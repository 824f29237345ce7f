import { STAGING } from '../../pullMirrors/refs.ts';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { gitEnv, PARSED_AS_WRITTEN } from '../../git/run.ts';
import { requestBody, type BackendSlots, type RequestBody } from './backendLimits.ts';
import { badRequest, forbidden, notFound, WharfError } from '../../errors/wharfError.ts';
import { readGitStderr } from '../../git/stderr.ts';
import { cutStalledAnswer } from '../../http/deadlines.ts';
import { alternateRefsCommand } from './hooks.ts';
import { notePushTips, type PushTipsNote } from './pushTips.ts';
import { relayedAnswer, type RelayedAnswer } from './relayedAnswer.ts';

/** Splits CGI output into its header block and the body bytes after it, or null if the block is not complete yet. */
export function splitCgiHeaders(buffer: Buffer): { headers: [string, string][]; status: number; rest: Buffer } | null {
  let end = buffer.indexOf('\r\n\r\n');
  let skip = 4;
  const lf = buffer.indexOf('\n\n');
  if (lf >= 0 && (end < 0 || lf < end)) [end, skip] = [lf, 2];
  if (end < 0) return null;
  let status = 200;
  const headers: [string, string][] = [];
  for (const line of buffer.toString('latin1', 0, end).split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number(/^\d{3}/.exec(value)?.[0] ?? 500);
    else headers.push([name, value]);
  }
  return { headers, status, rest: buffer.subarray(end + skip) };
}

/**
 * Settings given on the backend's command line, where they override any repository's own
 * config (an imported one's included): only Wharf's hooks run, every pushed object is
 * checked, and pushes are allowed because Wharf has already authorized the request.
 */
function backendOptions(hooksDir: string): string[] {
  return [
    ...['-c', `core.hooksPath=${hooksDir}`, '-c', 'receive.fsckObjects=true', ...PARSED_AS_WRITTEN],
    ...['-c', 'http.receivepack=true', '-c', 'http.uploadpack=true', '-c', 'uploadpack.allowFilter=true'],
    // A pull mirror's staged refs (src/pullMirrors/refs.ts) are never advertised, fetched or pushed to.
    ...['-c', `transfer.hideRefs=${STAGING}`],
    // A push's pack is written to disk by the pre-receive hook beside its checks (hooks.ts), not
    // by git after indexing it. Every git under the backend inherits this, so git's own
    // `gc --auto` is off here (a repack would drop old packs before its new one is on disk):
    // Wharf runs it after the push lands, with git's fsync (git/bare.ts tidyAfterPush).
    ...['-c', 'core.fsync=none', '-c', 'receive.autogc=false'],
    // Run when receive-pack's connectivity check starts: it lists the refs as git would and
    // starts the pre-receive hook's .gitmodules walk beside the check (hooks.ts).
    ...['-c', `core.alternateRefsCommand=${alternateRefsCommand(hooksDir)}`],
  ];
}

/**
 * Runs `git http-backend` as CGI for this request, streaming the request body to it and
 * its output to the client; nothing is buffered beyond the CGI header block. Resolves once
 * the response status and headers are set. `body`, when given, is the request body already
 * read, sent to the backend instead of the request stream. `onExit` runs after the backend has exited
 * (whether the client stayed or not) and before the response ends, so what a push must
 * leave on disk is there when `git push` returns. A client that goes away kills
 * the backend's whole process group. It first waits for one of `slots` (backends running
 * at once; anonymous clients together get at most half), a streamed body (a push) is
 * inflated here under a cap and dies after REQUEST_IDLE_TIMEOUT without a byte
 * (backendLimits.ts), and an answer its client stops reading is cut after `idleMs`.
 */
export async function runHttpBackend(
  ctx: Context,
  options: {
    hooksDir: string;
    env: Record<string, string>;
    log: Logger;
    onExit: () => Promise<void>;
    body?: Buffer;
    slots: BackendSlots;
    anonymousAddress?: string;
    /** GIT_IDLE_TIMEOUT: an answer whose client reads nothing for this long is cut (the backend killed, its slot freed). */
    idleMs: number;
    /** For a push: where the new ids of its commands are written as they stream in (pushTips.ts). */
    tipsFile?: string;
    /** For a fetch whose answer carries a pack: most of it may go to the socket through a relay (relayedAnswer.ts). */
    relay?: boolean;
  },
): Promise<void> {
  const env = { ...options.env };
  const input = options.body ? undefined : requestBody(ctx, env);
  // Waits for a slot; the slot is given back when the backend has exited.
  const release = await options.slots.acquire(options.anonymousAddress);
  if (ctx.req.socket.destroyed) return release(); // the client left while it waited
  return runBackend(ctx, env, input, options, release);
}

/** A running `git http-backend`: the process, its exit, its last stderr and why its input was refused, if it was. */
interface Backend {
  child: ChildProcessWithoutNullStreams;
  /** A push's tips being read off its body (pushTips.ts). */
  noted: PushTipsNote | undefined;
  exited: Promise<number | null>;
  stderr(): string;
  refused(): Error | undefined;
}

type BackendOptions = { hooksDir: string; log: Logger; onExit: () => Promise<void>; body?: Buffer; idleMs: number; tipsFile?: string; relay?: boolean };

/** Runs the backend for a request and answers with what it prints. */
function runBackend(ctx: Context, env: Record<string, string>, input: RequestBody | undefined, options: BackendOptions, release: () => void): Promise<void> {
  return answer(ctx, startBackend(ctx, env, input, options, release), options);
}

/**
 * Starts the backend in a process group of its own (so receive-pack and pack-objects die
 * with it), kills it when the client goes, feeds it the request body (already read, or
 * streamed), and gives the slot back when it exits.
 */
function startBackend(ctx: Context, env: Record<string, string>, input: RequestBody | undefined, options: BackendOptions, release: () => void): Backend {
  const child = spawn('git', [...backendOptions(options.hooksDir), 'http-backend'], { env: gitEnv(env), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const kill = () => {
    try {
      if (child.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  ctx.req.on('aborted', kill);
  ctx.res.on('close', () => {
    if (!ctx.res.writableFinished) kill();
  });
  ctx.req.on('error', kill);
  child.stdin.on('error', () => {}); // the backend may stop reading early; its exit status tells why
  // A body already read (a short request) is written as it is; otherwise it streams through.
  let refused: Error | undefined;
  let noted: PushTipsNote | undefined;
  if (options.body) child.stdin.end(options.body);
  else {
    input!.stream.pipe(child.stdin);
    if (options.tipsFile) noted = notePushTips(input!.stream, options.tipsFile); // after the pipe, which must see every byte
    void input!.failed.then((err) => {
      refused = err;
      kill();
    });
  }
  let stderr = '';
  child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-4096)));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      release();
      // What the backend did not read is read and dropped (never inflated), so the client
      // finishes sending and gets the answer rather than stalling on a full socket.
      if (!options.body) {
        ctx.req.unpipe();
        ctx.req.resume();
      }
      resolve(code);
    }),
  );
  child.on('error', (err) => options.log.error({ err, request_id: ctx.state.requestId }, 'could not run git http-backend'));
  return { child, exited, noted, stderr: () => stderr, refused: () => refused };
}

/**
 * Answers with the backend's output. The response starts with the first body byte, not
 * with the CGI headers: http-backend prints "200" before git has read the request, so a
 * request git rejects would otherwise be a 200 with nothing in it.
 */
function answer(ctx: Context, backend: Backend, options: BackendOptions): Promise<void> {
  const { child } = backend;
  const body = new PassThrough();
  return new Promise<void>((resolve, reject) => {
    let head = Buffer.alloc(0);
    let parsed: ReturnType<typeof splitCgiHeaders> = null;
    let started = false;
    let relayed: RelayedAnswer | undefined;
    // A client that stops reading holds the backend and its slot no longer than the idle deadline.
    const onCut = () =>
      options.log.info({ request_id: ctx.state.requestId, idle_ms: options.idleMs }, 'git answer cut: the client read nothing for GIT_IDLE_TIMEOUT');
    const start = (first: Buffer) => {
      started = true;
      child.stdout.off('data', onData);
      if (options.relay && parsed!.status === 200) {
        relayed = relayedAnswer(ctx, child.stdout, first, { headers: parsed!.headers, idleMs: options.idleMs, log: options.log, onCut });
        return resolve();
      }
      ctx.status = parsed!.status;
      for (const [name, value] of parsed!.headers) ctx.set(name, value);
      body.write(first);
      child.stdout.pipe(body, { end: false });
      ctx.body = body;
      cutStalledAnswer(ctx, options.idleMs, onCut);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      if (parsed) return start(chunk);
      head = Buffer.concat([head, chunk]);
      parsed = splitCgiHeaders(head);
      if (parsed && parsed.rest.length > 0) start(parsed.rest);
    };
    child.stdout.on('data', onData);
    const spawned = performance.now();
    void backend.exited.then(async (code) => {
      const stderr = backend.stderr();
      options.log.debug({ request_id: ctx.state.requestId, code, duration_ms: Math.round(performance.now() - spawned) }, 'git http-backend exited');
      if (stderr.trim()) options.log.warn({ request_id: ctx.state.requestId, code, stderr: stderr.trim() }, 'git http-backend');
      try {
        // Its tips file is written, or never will be, before onExit removes it.
        backend.noted?.stop();
        await backend.noted?.settled;
        await options.onExit();
      } catch (err) {
        options.log.error({ err, request_id: ctx.state.requestId }, 'after git http-backend');
      }
      if (relayed) return relayed.finish();
      if (started) return body.end();
      const refused = backend.refused();
      if (refused) return reject(refused);
      const error = emptyAnswerError(parsed?.status, code, stderr);
      if (error) return reject(error);
      start(Buffer.alloc(0)); // a clean, empty answer (a request with nothing to do)
      body.end();
    });
  });
}

/** The error for a backend run that ended without a body: its own status, else a 400 when git complained; null when all is well. */
export function emptyAnswerError(status: number | undefined, code: number | null, stderr: string): Error | null {
  if (status === undefined) return Object.assign(new Error(`git http-backend exited ${code} without a response`), { code });
  if (status === 404) return notFound('Not found');
  if (readGitStderr(stderr).kind === 'too_large') return new WharfError('payload_too_large', 'Request body is over its limit (10 MiB)');
  if (status === 403) return forbidden('git refused the request');
  if (status === 405) return new WharfError('method_not_allowed', 'git refused the request');
  if (status === 415) return new WharfError('unsupported_media_type', 'git refused the request');
  if (status >= 500) return Object.assign(new Error(`git http-backend answered ${status}`), { code });
  if (status >= 400) return badRequest('git refused the request');
  if (stderr.trim() || code !== 0) return badRequest('git could not read the request');
  return null;
}
