import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runCli } from '../helpers/cli.ts';
import { connect } from '../../src/db/connect.ts';
import { open } from '../../src/secrets/cipher.ts';
import { installation, serveOn } from '../secrets/helpers.ts';

const PASSWORD = 'mirror-password-rotate';

t.test('push mirror credentials are sealed at rest and re-sealed by wharf rotate-key', async (t) => {
  const env = await installation(t);
  const first = await serveOn(t, env);
  t.equal((await first.api('POST', '/api/v1/orgs/demo/repos', { name: 'app' })).status, 201);
  // Nothing listens on port 9: the syncs fail, and the credentials stay.
  const created = await first.api('POST', '/api/v1/repos/demo/app/push-mirrors', { url: 'http://127.0.0.1:9/x.git', username: 'sam', password: PASSWORD });
  t.equal(created.status, 201, created.text);
  await first.running.stop();

  const keyFile = path.join(env.DATA_DIR, 'secret.key');
  const oldKey = Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'hex');
  const stored = async () => {
    const db = connect(env.DATABASE_URL);
    try {
      return (await db('push_mirrors').first('credentials')).credentials as string;
    } finally {
      await db.destroy();
    }
  };
  const before = await stored();
  t.notOk(before.includes(PASSWORD), 'not stored in the clear');
  t.same(JSON.parse(open(oldKey, 'push_mirrors.credentials', before)), { username: 'sam', password: PASSWORD });

  const rotated = await runCli(['rotate-key'], env);
  t.equal(rotated.code, 0, rotated.stderr);
  t.match(rotated.stderr, /1 push_mirrors\.credentials/);
  const newKey = Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'hex');
  const after = await stored();
  t.same(JSON.parse(open(newKey, 'push_mirrors.credentials', after)), { username: 'sam', password: PASSWORD }, 'the new key opens it');
  t.throws(() => open(oldKey, 'push_mirrors.credentials', after), 'the old key does not');
});
