import fs from 'node:fs';
import path from 'node:path';
import { EventEmitter } from 'node:events';
import t from 'tap';
import { runCli } from '../helpers/cli.ts';
import { connect } from '../../src/db/connect.ts';
import { loadConfig } from '../../src/config.ts';
import { findOrg } from '../../src/domain/accounts.ts';
import { createImportJob } from '../../src/import/jobs.ts';
import { openSecrets } from '../../src/secrets/boot.ts';
import { open } from '../../src/secrets/cipher.ts';
import { freePort } from '../helpers/daemon.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { installation, openAll, serveOn } from './helpers.ts';

const SECRET = 'rotate me ✓';
const PASSWORD = 'import-password-rotate';
const HEADER = 'Bearer custom-header-rotate';

t.test('wharf rotate-key re-seals everything with a new key in DATA_DIR; the old key no longer opens or starts; deliveries still verify', async (t) => {
  const env = await installation(t);
  const rx = await startReceiver(t);
  const first = await serveOn(t, env);
  t.equal((await first.api('POST', '/api/v1/orgs/demo/repos', { name: 'app' })).status, 201);
  const hook = await first.api('POST', '/api/v1/repos/demo/app/webhooks', { url: `${rx.url}/hook`, secret: SECRET, headers: { Authorization: HEADER } });
  t.equal(hook.status, 201, hook.text);
  rx.secrets.set(hook.body.id, SECRET);
  await waitFor(() => rx.received.length === 1, { what: 'the creation ping' });
  await first.running.stop();
  // An import that has not run yet keeps its credentials (nothing listens at its source).
  {
    const db = connect(env.DATABASE_URL);
    const config = await openSecrets(loadConfig(env), db);
    await createImportJob({ db, config, signals: new EventEmitter() }, (await findOrg(db, 'demo'))!, null, {
      source_url: `http://127.0.0.1:${await freePort()}/x.git`,
      name: 'later',
      auth_username: 'sam',
      auth_password: PASSWORD,
    });
    await db.destroy();
  }
  const keyFile = path.join(env.DATA_DIR, 'secret.key');
  const oldKey = Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'hex');
  t.same(await openAll(env, oldKey), { secrets: [SECRET], passwords: [PASSWORD], check: 'wharf secret key check' }, 'before: the old key opens everything');

  const rotated = await runCli(['rotate-key'], env);
  t.equal(rotated.code, 0, rotated.stderr);
  t.equal(rotated.stdout, '', 'a key kept in DATA_DIR is not printed');
  t.match(
    rotated.stderr,
    /Re-encrypted 1 webhooks\.secret, 1 webhooks\.headers, 1 import_jobs\.credentials, 0 push_mirrors\.credentials, 0 repository_mirrors\.credentials with key id [0-9a-f]{8}/,
  );
  t.match(rotated.stderr, /copy that file into its DATA_DIR/, 'says what to do on the other nodes');
  const newKey = Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'hex');
  t.equal(newKey.length, 32);
  t.notOk(newKey.equals(oldKey), 'the key file holds a new key');
  t.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
  t.notOk(fs.existsSync(`${keyFile}.new`), 'no staged key left behind');
  t.same(await openAll(env, newKey), { secrets: [SECRET], passwords: [PASSWORD], check: 'wharf secret key check' }, 'after: the new key opens everything');
  await t.rejects(openAll(env, oldKey), { name: 'SecretOpenError' }, 'the old key opens nothing');
  {
    const db = connect(env.DATABASE_URL);
    const { headers } = await db('webhooks').where('id', hook.body.id).first('headers');
    await db.destroy();
    t.same(JSON.parse(open(newKey, 'webhooks.headers', headers)), { Authorization: HEADER }, 'the custom headers are re-sealed with the new key');
    t.throws(() => open(oldKey, 'webhooks.headers', headers), { name: 'SecretOpenError' });
  }

  const stale = await runCli(['serve'], { ...env, SECRET_KEY: oldKey.toString('hex') });
  t.equal(stale.code, 1, 'a node still given the old key refuses to start');
  t.match(stale.stderr, /^wharf: SECRET_KEY \(key id [0-9a-f]{8}\) does not open the secrets stored in this database[^\n]*\n$/);

  const after = await serveOn(t, env);
  t.equal((await after.api('POST', `/api/v1/webhooks/${hook.body.id}/ping`)).status, 202);
  await waitFor(() => rx.received.length === 2, { what: 'the ping after the rotation' });
  t.ok(
    rx.received.every((r) => r.signatureOk),
    'signed with the same secret, before and after',
  );
  t.same(
    rx.received.map((r) => r.headers.authorization),
    [HEADER, HEADER],
    'the custom header is sent before and after',
  );
});
