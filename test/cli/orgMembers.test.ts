import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { runCli } from '../helpers/cli.ts';
import { connect } from '../../src/db/connect.ts';

async function environment(t: any) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-cli-members-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { DATA_DIR: path.join(dir, 'data'), REPOS_DIR: path.join(dir, 'repos'), DATABASE_URL: database.url, LOG_LEVEL: 'silent' };
}

/** The memberships of an organization as `login:role`, read from the database the CLI wrote. */
async function members(env: { DATABASE_URL: string }, org: string): Promise<string[]> {
  const db = connect(env.DATABASE_URL);
  try {
    const rows = await db('memberships as m')
      .join('users as u', 'u.id', 'm.user_id')
      .join('orgs as o', 'o.id', 'm.org_id')
      .where('o.name', org)
      .orderBy('u.login')
      .select('u.login', 'm.role');
    return rows.map((r: { login: string; role: string }) => `${r.login}:${r.role}`);
  } finally {
    await db.destroy();
  }
}

t.test('org add-member and remove-member: roles, the last owner kept, exit codes', async (t) => {
  const env = await environment(t);
  t.equal((await runCli(['migrate'], env)).code, 0);
  t.equal((await runCli(['org', 'create', 'acme'], env)).code, 0);
  for (const login of ['ann', 'bob']) t.equal((await runCli(['user', 'create', login], env)).code, 0);

  const added = await runCli(['org', 'add-member', 'acme', 'ann', '--role', 'owner'], env);
  t.equal(added.code, 0, added.stderr);
  t.equal(added.stdout, 'ann is now an owner of acme\n');
  t.equal((await runCli(['org', 'add-member', 'acme', 'bob'], env)).code, 0, 'member is the default role');
  t.same(await members(env, 'acme'), ['ann:owner', 'bob:member']);

  const demote = await runCli(['org', 'add-member', 'acme', 'ann', '--role', 'member'], env);
  t.equal(demote.code, 1, 'demoting the last owner fails');
  t.match(demote.stderr, /^wharf: An organization keeps at least one owner/);
  const removeOwner = await runCli(['org', 'remove-member', 'acme', 'ann'], env);
  t.equal(removeOwner.code, 1, 'removing the last owner fails');
  t.match(removeOwner.stderr, /at least one owner/);
  t.same(await members(env, 'acme'), ['ann:owner', 'bob:member'], 'nothing changed');

  t.equal((await runCli(['org', 'add-member', 'acme', 'bob', '--role', 'owner'], env)).code, 0, 'a second owner');
  t.equal((await runCli(['org', 'add-member', 'acme', 'ann', '--role', 'member'], env)).code, 0, 'then the first may step down');
  const removed = await runCli(['org', 'remove-member', 'acme', 'ann'], env);
  t.equal(removed.code, 0, removed.stderr);
  t.equal(removed.stdout, 'removed ann from acme\n');
  t.same(await members(env, 'acme'), ['bob:owner']);

  const notMember = await runCli(['org', 'remove-member', 'acme', 'ann'], env);
  t.equal(notMember.code, 1);
  t.equal(notMember.stderr, 'wharf: ann is not a member of acme\n');
  t.equal((await runCli(['org', 'add-member', 'nope', 'ann'], env)).stderr, 'wharf: no organization named nope\n');
  t.equal((await runCli(['org', 'add-member', 'acme', 'nobody'], env)).stderr, 'wharf: no user named nobody\n');
  t.equal((await runCli(['org', 'add-member', 'acme', 'ann', '--role', 'king'], env)).code, 2, 'a bad role is usage');
  t.equal((await runCli(['org', 'remove-member', 'acme'], env)).code, 2, 'a missing argument is usage');
});

t.test('token revoke: by id or by a name only one token has; the secret is never printed', async (t) => {
  const env = await environment(t);
  t.equal((await runCli(['migrate'], env)).code, 0);
  t.equal((await runCli(['user', 'create', 'ann'], env)).code, 0);
  const ci = (await runCli(['token', 'create', 'ann', '--name', 'ci'], env)).stdout.trim();
  const first = (await runCli(['token', 'create', 'ann', '--name', 'laptop'], env)).stdout.trim();
  const second = (await runCli(['token', 'create', 'ann', '--name', 'laptop'], env)).stdout.trim();
  const db = connect(env.DATABASE_URL);
  t.teardown(() => db.destroy());
  const ids = Object.fromEntries(
    (await db('access_tokens').orderBy('id').select('id')).map((r: { id: number }, i: number) => [['ci', 'first', 'second'][i], Number(r.id)]),
  );
  const revokedIds = async () => (await db('access_tokens').whereNotNull('revoked_at').orderBy('id').select('id')).map((r: { id: number }) => Number(r.id));

  const byName = await runCli(['token', 'revoke', 'ann', 'ci'], env);
  t.equal(byName.code, 0, byName.stderr);
  t.equal(byName.stdout, `revoked token ${ids.ci} (ci) of ann\n`);
  t.same(await revokedIds(), [ids.ci]);

  const ambiguous = await runCli(['token', 'revoke', 'ann', 'laptop'], env);
  t.equal(ambiguous.code, 1);
  t.equal(ambiguous.stderr, `wharf: ann has 2 tokens named laptop (ids ${ids.second}, ${ids.first}): give the id of the one to revoke\n`);
  const byId = await runCli(['token', 'revoke', 'ann', String(ids.first)], env);
  t.equal(byId.code, 0, byId.stderr);
  t.same(await revokedIds(), [ids.ci, ids.first]);

  const again = await runCli(['token', 'revoke', 'ann', String(ids.first)], env);
  t.equal(again.code, 1, 'a revoked token is no longer there to revoke');
  t.equal(again.stderr, `wharf: ann has no live token with the id or name ${ids.first}\n`);
  t.equal((await runCli(['token', 'revoke', 'nobody', 'ci'], env)).stderr, 'wharf: no user named nobody\n');
  t.equal((await runCli(['token', 'revoke', 'ann'], env)).code, 2, 'a missing argument is usage');
  for (const secret of [ci, first, second])
    t.notOk(byName.stdout.includes(secret) || byId.stdout.includes(secret) || ambiguous.stderr.includes(secret), 'no secret printed');
});
