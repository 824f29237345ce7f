import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Agent, request } from 'undici';
import { buildRepo, buildUser, startWharf, type ApiAnswer, type TestWharf } from '../helpers/wharf.ts';
import { issueToken } from '../../src/domain/tokens.ts';
import { isPostgres } from '../../src/db/connect.ts';
import { createTestDatabase, postgresUrl } from '../helpers/database.ts';
import { startServeProcess } from '../helpers/serveProcess.ts';
import { loadConfig, ConfigError } from '../../src/config.ts';

/** Asserts a 429 with Retry-After within the window and SPEC §4's body. */
function isRateLimited(t: Test, answer: ApiAnswer, windowSeconds: number) {
  t.equal(answer.status, 429, 'status 429');
  t.equal(answer.body?.error?.code, 'rate_limited');
  t.type(answer.body?.error?.message, 'string');
  t.same(answer.body?.error?.details, []);
  t.equal(answer.body?.request_id, answer.headers.get('x-request-id'));
  const retryAfter = Number(answer.headers.get('retry-after'));
  t.ok(retryAfter >= 1 && retryAfter <= windowSeconds, `Retry-After ${retryAfter} within the window`);
  t.equal(answer.headers.get('x-ratelimit-remaining'), '0');
}

t.test('RATE_LIMIT: default, syntax, off, and one clear error on a bad value', async (t) => {
  t.same(loadConfig({}).rateLimit, { token: { points: 5000, durationMs: 3_600_000 }, anonymous: { points: 1000, durationMs: 3_600_000 } });
  t.same(loadConfig({ RATE_LIMIT: '10/1m' }).rateLimit, { token: { points: 10, durationMs: 60_000 }, anonymous: { points: 10, durationMs: 60_000 } });
  t.same(loadConfig({ RATE_LIMIT: '100/30s, 5/1d' }).rateLimit, {
    token: { points: 100, durationMs: 30_000 },
    anonymous: { points: 5, durationMs: 86_400_000 },
  });
  t.equal(loadConfig({ RATE_LIMIT: 'off' }).rateLimit, null);
  for (const bad of ['5000', '0/1h', '5/0s', '5/1500ms', 'x/1h', '1/1h,2/1h,3/1h', '5/1h;', '1/400d']) {
    let error: unknown;
    try {
      loadConfig({ RATE_LIMIT: bad });
    } catch (err) {
      error = err;
    }
    t.ok(error instanceof ConfigError && /^RATE_LIMIT: .*\n?$/.test(error.message) && !error.message.includes('\n'), `${bad}: ${String(error)}`);
  }
});

t.test('per user: the N+1th request is a 429; other users and anonymous callers keep their own counts', async (t) => {
  const w = await startWharf(t, { env: { RATE_LIMIT: '3/1h,2/1h' } });
  const { token: other } = await buildUser(w, 'bob');
  const remaining: (string | null)[] = [];
  for (let i = 0; i < 3; i++) {
    const ok = await w.api('GET', '/api/v1/user');
    t.equal(ok.status, 200);
    t.equal(ok.headers.get('x-ratelimit-limit'), '3');
    remaining.push(ok.headers.get('x-ratelimit-remaining'));
    const reset = Number(ok.headers.get('x-ratelimit-reset'));
    t.ok(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 3601, 'X-RateLimit-Reset is the window end in epoch seconds');
  }
  t.same(remaining, ['2', '1', '0']);
  isRateLimited(t, await w.api('GET', '/api/v1/user'), 3600);
  // A refused request writes nothing either.
  isRateLimited(t, await w.api('POST', '/api/v1/user/tokens', { body: { name: 'more' } }), 3600);
  const [{ n }] = await w.running.services.db('access_tokens').count({ n: '*' });
  t.equal(Number(n), 2, 'no token was issued by the refused request');
  t.equal((await w.api('GET', '/api/v1/user', { token: other })).status, 200, 'another user has their own count');
  t.equal((await w.api('GET', '/api/v1/meta', { token: null })).status, 200, 'anonymous callers have their own count');
  for (let i = 0; i < 5; i++) t.equal((await w.api('GET', '/api/v1/health', { token: null })).status, 200, 'the health check is not counted');
});

t.test('per address: anonymous API, Git and LFS requests share one count; made-up tokens count against the address', async (t) => {
  const w = await startWharf(t, { env: { RATE_LIMIT: '100/1h,4/1h' } });
  await buildRepo(w, 'demo', 'pub', 'public');
  t.equal((await w.api('GET', '/api/v1/meta', { token: null })).status, 200);
  const refs = await fetch(`${w.url}/demo/pub.git/info/refs?service=git-upload-pack`);
  t.equal(refs.status, 200, 'anonymous clone advertisement');
  t.equal(refs.headers.get('x-ratelimit-remaining'), '2');
  await refs.arrayBuffer();
  // Each made-up token is refused (401) and charged to the address.
  t.equal((await w.api('GET', '/api/v1/user', { token: 'wharf_madeup1' })).status, 401);
  t.equal((await w.api('GET', '/api/v1/user', { token: 'wharf_madeup2' })).status, 401);
  isRateLimited(t, await w.api('GET', '/api/v1/user', { token: 'wharf_madeup3' }), 3600);
  isRateLimited(t, await w.api('GET', '/api/v1/meta', { token: null }), 3600);
  const lfs = await w.api('POST', '/demo/pub.git/info/lfs/objects/batch', {
    token: null,
    body: { operation: 'download', objects: [] },
    headers: { 'content-type': 'application/vnd.git-lfs+json' },
  });
  isRateLimited(t, lfs, 3600);
  const git = await fetch(`${w.url}/demo/pub.git/info/refs?service=git-upload-pack`);
  t.equal(git.status, 429, 'Git is refused too');
  t.ok(Number(git.headers.get('retry-after')) >= 1);
  await git.arrayBuffer();
  // A real token still works: its count is its own.
  t.equal((await w.api('GET', '/api/v1/user')).status, 200);
  t.equal((await fetch(`${w.url}/metrics`)).status === 429, false, '/metrics is not counted');
});

/** Starts `wharf serve` as a child process, stopped when the test ends (see startServeProcess). */
const serve = (t: Test, env: Record<string, string>) => startServeProcess(env, { t });

t.test('two processes on one Postgres share the count', { skip: postgresUrl ? false : 'needs TEST_DATABASE_URL (Postgres)' }, async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-rl-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const env = {
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: database.url,
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    LOG_LEVEL: 'silent',
    RATE_LIMIT: '6/1h,50/1h',
  };
  const first = await serve(t, env);
  const second = await serve(t, env);
  t.ok(first.token, 'the first process created the admin token');
  const get = (url: string) => fetch(`${url}/api/v1/user`, { headers: { authorization: `Bearer ${first.token}` } });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    for (const url of [first.url, second.url]) {
      const res = await get(url);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
  }
  t.same(statuses, [200, 200, 200, 200, 200, 200, 429, 429], 'six requests across both processes, then 429 on either');
});

/** Rows the limiter keeps in the database (Postgres); null on SQLite, whose counts live in memory. */
async function rateLimitRows(w: TestWharf): Promise<number | null> {
  if (!isPostgres(w.running.services.db)) return null;
  const [{ n }] = await w.running.services.db('rate_limits').count({ n: '*' });
  return Number(n);
}

t.test('made-up tokens count against the address before anything runs, on open routes too, and store no row of their own', async (t) => {
  const w = await startWharf(t, { env: { RATE_LIMIT: '100/1h,3/1h' } });
  const madeUp = (i: number) => `wharf_madeup_${i}_${'x'.repeat(20)}`;
  for (let i = 0; i < 3; i++) t.equal((await w.api('GET', '/api/v1/meta', { token: null })).status, 200, 'anonymous within the quota');
  for (let i = 0; i < 15; i++) isRateLimited(t, await w.api('GET', '/api/v1/meta', { token: madeUp(i) }), 3600);
  for (let i = 15; i < 20; i++) isRateLimited(t, await w.api('GET', '/api/v1/user', { token: madeUp(i) }), 3600);
  const rows = await rateLimitRows(w);
  if (rows !== null) t.ok(rows <= 1, `one row for the address at most, not one per token (${rows})`);
  t.equal((await w.api('GET', '/api/v1/user')).status, 200, 'a real token keeps its own count');

  // The other way round: made-up tokens spend the address's quota, so an anonymous request then waits.
  const w2 = await startWharf(t, { env: { RATE_LIMIT: '100/1h,3/1h' } });
  for (let i = 0; i < 3; i++) t.equal((await w2.api('GET', '/api/v1/meta', { token: madeUp(i) })).status, 200, 'made-up token within the address quota');
  isRateLimited(t, await w2.api('GET', '/api/v1/meta', { token: null }), 3600);
  const git = await fetch(`${w2.url}/demo/pub.git/info/refs?service=git-upload-pack`, {
    headers: { authorization: `Basic ${Buffer.from(`x:${madeUp(9)}`).toString('base64')}` },
  });
  t.equal(git.status, 429, 'a made-up Git password is refused before the route runs');
  await git.arrayBuffer();
});

t.test('the quota is per user, across all their tokens; another user keeps their own', async (t) => {
  const w = await startWharf(t, { env: { RATE_LIMIT: '4/1h,100/1h' } });
  const tokens = [w.adminToken];
  for (let i = 0; i < 4; i++) tokens.push((await issueToken(w.running.services.db, 1, `extra ${i}`)).token);
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await w.api('GET', '/api/v1/user', { token: tokens[i % tokens.length] })).status);
  t.same(statuses, [200, 200, 200, 200, 429, 429, 429, 429], 'four requests in all, whichever token');
  const { token: other } = await buildUser(w, 'bob');
  t.equal((await w.api('GET', '/api/v1/user', { token: other })).status, 200, 'another user has their own count');
  const rows = await rateLimitRows(w);
  if (rows !== null) t.equal(rows, 2, 'one row per user');
});

/** A browser at its own loopback address (127.0.0.x): keeps cookies and posts the sign-in form. */
function browserAt(t: Test, url: string, address: string) {
  const agent = new Agent({ localAddress: address });
  t.teardown(() => agent.close());
  const cookies = new Map<string, string>();
  const send = async (method: string, path: string, form?: Record<string, string>) => {
    const headers: Record<string, string> = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await request(`${url}${path}`, { method, headers, body: form && new URLSearchParams(form).toString(), dispatcher: agent });
    const setCookie = res.headers['set-cookie'];
    for (const c of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return { status: res.statusCode, text: await res.body.text(), location: res.headers.location };
  };
  return {
    async signIn(token: string) {
      const page = await send('GET', '/-/login');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
      return send('POST', '/-/login', { _csrf: csrf, next: '/', token });
    },
  };
}

t.test("web sign-ins are charged to the browser's address, not to the server's own; past the limit every token gets 429", async (t) => {
  const w = await startWharf(t, { env: { RATE_LIMIT: '100/1h,3/1h' } });
  const guesser = browserAt(t, w.url, '127.0.0.2');
  for (let i = 0; i < 3; i++) {
    const failed = await guesser.signIn(`wharf_guess_${i}`);
    t.equal(failed.status, 422, 'a wrong token is refused on the form');
    t.match(failed.text, /unknown, expired or revoked/);
  }
  const refused = await guesser.signIn('wharf_guess_4');
  t.equal(refused.status, 429, 'the guesser is refused once its address is over the quota');
  t.match(refused.text, /Too many/);
  const valid = await guesser.signIn(w.adminToken);
  t.equal(valid.status, 429, 'past the limit a valid token is refused too: the form tells nothing of the tokens tried on it');
  t.match(valid.text, /Too many/);

  const someone = browserAt(t, w.url, '127.0.0.3');
  const mistyped = await someone.signIn('wharf_typo');
  t.equal(mistyped.status, 422, 'another browser is not refused for the guesser');
  t.match(mistyped.text, /unknown, expired or revoked/);
  t.equal((await someone.signIn(w.adminToken)).status, 303);
  t.equal((await w.api('GET', '/api/v1/meta', { token: null })).status, 200, "the server's own address was not charged");
});
