// The git bench's baseline (SPEC §13): `git http-backend` run as CGI behind the least
// HTTP server that can run it, with no authentication (the smart-HTTP limit), as a web
// server in front of bare git would (Apache's or lighttpd's mod_cgi): the CGI variables
// git http-backend reads (REMOTE_USER only when a client sends Basic credentials of its
// own accord; the repositories have http.receivepack set, so anonymous pushes are taken),
// the request body streamed to its stdin as it arrives (a chunked push has no
// Content-Length, and http-backend then reads to EOF), a gzip body passed through
// (HTTP_CONTENT_ENCODING: http-backend inflates it), and its output streamed back after
// the CGI header block. No limits, no database, no hooks.
//
// Run as a process of its own, as Wharf is (`node --import tsx bench/gitBackend.ts <root>`
// prints `port <n>`), so neither server shares an event loop with the bench harness.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// The CGI header parser Wharf's own route uses: a pure function, no part of what is measured.
import { splitCgiHeaders } from '../src/transport/git/cgi.ts';

/** The user name of a Basic Authorization header; empty without one. */
function basicUser(header: string | undefined): string {
  const m = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!m) return '';
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  return decoded.slice(0, Math.max(0, decoded.indexOf(':')));
}

/** The CGI environment of one request for git http-backend serving the repositories under `root`. */
function cgiEnv(req: http.IncomingMessage, root: string): NodeJS.ProcessEnv {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_ADDR: req.socket.remoteAddress ?? '',
  };
  const user = basicUser(req.headers.authorization);
  if (user) env.REMOTE_USER = user;
  if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
  if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
  const protocol = req.headers['git-protocol'];
  if (typeof protocol === 'string') env.HTTP_GIT_PROTOCOL = env.GIT_PROTOCOL = protocol;
  return env;
}

/** Answers one request by running git http-backend for it. */
function serve(req: http.IncomingMessage, res: http.ServerResponse, root: string): void {
  const child = spawn('git', ['http-backend'], { env: cgiEnv(req, root), stdio: ['pipe', 'pipe', 'pipe'] });
  req.pipe(child.stdin);
  child.stdin.on('error', () => {}); // http-backend may answer without reading all of the body
  let stderr = '';
  child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-4096)));
  let head = Buffer.alloc(0);
  let started = false;
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const parsed = splitCgiHeaders(head);
    if (!parsed) return;
    started = true;
    child.stdout.off('data', onData);
    res.writeHead(parsed.status, parsed.headers.flat());
    if (parsed.rest.length) res.write(parsed.rest);
    child.stdout.pipe(res);
  };
  child.stdout.on('data', onData);
  child.on('close', (code) => {
    if (code !== 0 || stderr.trim()) process.stderr.write(`git http-backend ${req.method} ${req.url} exited ${code}: ${stderr.trim()}\n`);
    if (!started) {
      res.writeHead(500, { 'Content-Length': 0 });
      res.end();
    }
    // What http-backend did not read is dropped, so the client can finish and read the answer.
    req.resume();
  });
  res.on('close', () => {
    if (!res.writableFinished && child.exitCode === null) child.kill('SIGTERM');
  });
}

/** An HTTP server running git http-backend for the repositories under `root`. */
export function gitBackendServer(root: string): http.Server {
  const server = http.createServer((req, res) => serve(req, res, root));
  server.keepAliveTimeout = 60_000;
  return server;
}

/** This file's path, for starting it as a process of its own. */
export const GIT_BACKEND_SCRIPT = fileURLToPath(import.meta.url);

if (process.argv[1] && path.resolve(process.argv[1]) === GIT_BACKEND_SCRIPT) {
  const root = process.argv[2];
  if (!root) throw new Error('usage: gitBackend.ts <project root>');
  const server = gitBackendServer(root);
  server.listen(0, '127.0.0.1', () => console.log(`port ${(server.address() as import('node:net').AddressInfo).port}`));
}
