import t, { type Test } from 'tap';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { connect } from '../../src/db/connect.ts';
import { issueToken } from '../../src/domain/tokens.ts';
import { clockPast } from '../helpers/wait.ts';

/** Asserts a SPEC §4 error body. */
function isError(t: Test, answer: { status: number; body: any; headers: Headers }, status: number, code: string) {
  t.equal(answer.status, status, `status ${status}`);
  t.equal(answer.body?.error?.code, code, `code ${code}`);
  t.type(answer.body?.error?.message, 'string');
  t.ok(Array.isArray(answer.body?.error?.details), 'details is an array');
  t.equal(answer.body?.request_id, answer.headers.get('x-request-id'), 'request id in body and header');
}

t.test('health and meta need no token', async (t) => {
  const w = await startWharf(t);
  const health = await w.api('GET', '/api/v1/health', { token: null });
  t.equal(health.status, 200);
  t.same(health.body, { status: 'ok', database: 'ok', repos_dir: 'ok', lfs_store: { kind: 'fs', status: 'ok' } });
  t.match(health.headers.get('x-request-id'), /\S+/);
  const meta = await w.api('GET', '/api/v1/meta', { token: null });
  t.same(meta.body.hooks, ['203.0.113.0/24', '198.51.100.0/24']);
});

t.test('the bootstrap token is the admin, who owns demo', async (t) => {
  const w = await startWharf(t);
  const me = await w.api('GET', '/api/v1/user');
  t.equal(me.status, 200);
  t.equal(me.body.login, 'admin');
  t.equal(me.body.is_admin, true);
  t.same(me.body.orgs, [{ name: 'demo', role: 'owner' }]);
});

t.test('tokens: missing, malformed, unknown, expired and revoked are 401', async (t) => {
  const w = await startWharf(t);
  isError(t, await w.api('GET', '/api/v1/user', { token: null }), 401, 'unauthorized');
  isError(t, await w.api('GET', '/api/v1/user', { token: null, headers: { authorization: 'Basic abc' } }), 401, 'unauthorized');
  isError(t, await w.api('GET', '/api/v1/user', { token: 'wharf_nope' }), 401, 'unauthorized');

  const db = w.running.services.db;
  const expired = await issueToken(db, 1, 'short', 1);
  await clockPast(Date.parse(expired.expires_at!));
  isError(t, await w.api('GET', '/api/v1/user', { token: expired.token }), 401, 'unauthorized');

  const made = await w.api('POST', '/api/v1/user/tokens', { body: { name: 'ci', expires_in: '30d' } });
  t.equal(made.status, 201);
  t.match(made.body.token, /^wharf_/);
  t.match(made.body.expires_at, /^\d{4}-/);
  t.equal((await w.api('GET', '/api/v1/user', { token: made.body.token })).status, 200);
  t.equal((await w.api('DELETE', `/api/v1/user/tokens/${made.body.id}`)).status, 204);
  isError(t, await w.api('GET', '/api/v1/user', { token: made.body.token }), 401, 'unauthorized');
  isError(t, await w.api('DELETE', `/api/v1/user/tokens/${made.body.id}`), 404, 'not_found');
  isError(t, await w.api('DELETE', '/api/v1/user/tokens/99999'), 404, 'not_found');
  isError(t, await w.api('DELETE', '/api/v1/user/tokens/99999999999'), 404, 'not_found');
  isError(t, await w.api('DELETE', '/api/v1/user/tokens/abc'), 404, 'not_found');

  // Only the hash is stored.
  const rows = await db('access_tokens').select('token_hash');
  t.notOk(rows.some((r: any) => r.token_hash === made.body.token));
  t.notOk(w.logs.join('').includes(made.body.token), 'token never logged');
  t.notOk(w.logs.join('').includes(w.adminToken), 'admin token never logged');
});

t.test('bad bodies: malformed JSON 400, not JSON 415, oversize 413, schema 422 with every field', async (t) => {
  const w = await startWharf(t);
  isError(t, await w.api('POST', '/api/v1/user/tokens', { rawBody: '{"name":', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
  isError(
    t,
    await w.api('POST', '/api/v1/user/tokens', { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    415,
    'unsupported_media_type',
  );
  isError(
    t,
    await w.api('POST', '/api/v1/user/tokens', {
      rawBody: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
      headers: { 'content-type': 'application/json' },
    }),
    413,
    'payload_too_large',
  );
  const invalid = await w.api('POST', '/api/v1/user/tokens', { body: { name: 5, expires_in: [], extra: true } });
  isError(t, invalid, 422, 'validation_failed');
  t.same(invalid.body.error.details.map((d: any) => d.path).sort(), ['/expires_in', '/extra', '/name']);
  isError(t, await w.api('POST', '/api/v1/user/tokens', { body: [1, 2] }), 422, 'validation_failed');
  isError(t, await w.api('POST', '/api/v1/user/tokens', { body: 'text' }), 422, 'validation_failed');
  isError(t, await w.api('POST', '/api/v1/user/tokens'), 422, 'validation_failed');
  isError(t, await w.api('POST', '/api/v1/user/tokens', { body: { name: 'x', expires_in: 'soon' } }), 422, 'validation_failed');
  isError(t, await w.api('GET', '/api/v1/no/such/thing'), 404, 'not_found');
});

t.test('organizations, members and repositories follow the roles', async (t) => {
  const w = await startWharf(t);
  const org = await w.api('POST', '/api/v1/orgs', { body: { name: 'acme' } });
  t.equal(org.status, 201);
  t.equal(org.headers.get('location'), '/api/v1/orgs/acme');
  isError(t, await w.api('POST', '/api/v1/orgs', { body: { name: 'acme' } }), 409, 'conflict');
  isError(t, await w.api('POST', '/api/v1/orgs', { body: { name: '../etc' } }), 422, 'validation_failed');
  isError(t, await w.api('POST', '/api/v1/orgs', { body: { name: 'x.git' } }), 422, 'validation_failed');

  const member = await buildUser(w, 'mia');
  const outsider = await buildUser(w, 'otto', { org: 'other', role: 'owner' });
  isError(t, await w.api('POST', '/api/v1/orgs', { token: member.token, body: { name: 'mine' } }), 403, 'forbidden');

  t.equal((await w.api('POST', '/api/v1/orgs/acme/members', { body: { login: 'mia', role: 'member' } })).status, 200);
  isError(t, await w.api('POST', '/api/v1/orgs/acme/members', { body: { login: 'nobody' } }), 422, 'validation_failed');
  isError(t, await w.api('POST', '/api/v1/orgs/acme/members', { token: member.token, body: { login: 'otto' } }), 403, 'forbidden');
  isError(t, await w.api('POST', '/api/v1/orgs/acme/members', { token: outsider.token, body: { login: 'otto' } }), 404, 'not_found');
  isError(t, await w.api('POST', '/api/v1/orgs/nope/members', { body: { login: 'otto' } }), 404, 'not_found');

  const repo = await w.api('POST', '/api/v1/orgs/acme/repos', { token: member.token, body: { name: 'widgets' } });
  t.equal(repo.status, 201);
  t.equal(repo.body.full_name, 'acme/widgets');
  t.equal(repo.body.visibility, 'private');
  t.equal(repo.body.default_branch, 'main');
  t.equal(repo.body.clone_url, `${w.url}/acme/widgets.git`);
  t.ok((await import('node:fs')).existsSync(`${w.config.reposDir}/acme/widgets.git/HEAD`), 'bare repository on disk');
  isError(t, await w.api('POST', '/api/v1/orgs/acme/repos', { body: { name: 'widgets' } }), 409, 'conflict');
  isError(t, await w.api('POST', '/api/v1/orgs/acme/repos', { body: { name: 'w', visibility: 'secret' } }), 422, 'validation_failed');
  isError(t, await w.api('POST', '/api/v1/orgs/acme/repos', { token: outsider.token, body: { name: 'x' } }), 404, 'not_found');
  isError(t, await w.api('POST', '/api/v1/orgs/acme/repos', { token: null, body: { name: 'x' } }), 401, 'unauthorized');

  await buildRepo(w, 'acme', 'open-door', 'public');
  await buildRepo(w, 'acme', 'in-house', 'internal');
  const seenByOutsider = await w.api('GET', '/api/v1/orgs/acme/repos', { token: outsider.token });
  t.same(
    seenByOutsider.body.map((r: any) => r.name),
    ['in-house', 'open-door'],
  );
  const seenByMember = await w.api('GET', '/api/v1/orgs/acme/repos', { token: member.token });
  t.same(
    seenByMember.body.map((r: any) => r.name),
    ['in-house', 'open-door', 'widgets'],
  );
  isError(t, await w.api('GET', '/api/v1/orgs/nope/repos'), 404, 'not_found');

  t.equal((await w.api('GET', '/api/v1/repos/acme/widgets', { token: member.token })).status, 200);
  isError(t, await w.api('GET', '/api/v1/repos/acme/widgets', { token: outsider.token }), 404, 'not_found');
  t.equal((await w.api('GET', '/api/v1/repos/acme/in-house', { token: outsider.token })).status, 200);
  isError(t, await w.api('GET', '/api/v1/repos/acme/nope'), 404, 'not_found');
  isError(t, await w.api('GET', '/api/v1/repos/acme/open-door', { token: null }), 401, 'unauthorized');
});

t.test('the database can be reopened and migrated twice', async (t) => {
  const w = await startWharf(t);
  const db = connect(w.database.url);
  t.teardown(() => db.destroy());
  await db.migrate.latest();
  t.equal((await db('users').count('* as n'))[0].n, 1);
});

t.test("a repository's default branch follows git's branch name rules; dotted and nested names work", async (t) => {
  const w = await startWharf(t);
  await w.api('POST', '/api/v1/orgs', { body: { name: 'acme' } });
  for (const bad of ['x.lock', 'a//b', '/a', 'a/', '.hidden', 'a/.b', 'a..b', 'a.', '-a', 'a b'])
    isError(t, await w.api('POST', '/api/v1/orgs/acme/repos', { body: { name: `bad-${bad.length}`, default_branch: bad } }), 422, 'validation_failed');
  for (const [name, branch] of [
    ['dotted', 'release-1.0'],
    ['nested', 'team/dev'],
  ]) {
    const made = await w.api('POST', '/api/v1/orgs/acme/repos', { body: { name, default_branch: branch } });
    t.equal(made.status, 201, `default branch ${branch}`);
    const head = (await import('node:fs')).readFileSync(`${w.config.reposDir}/acme/${name}.git/HEAD`, 'utf8');
    t.equal(head, `ref: refs/heads/${branch}\n`, `HEAD names ${branch}`);
  }
});
