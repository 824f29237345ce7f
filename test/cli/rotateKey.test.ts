import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runCli } from '../helpers/cli.ts';
import { generateKey } from '../../src/secrets/key.ts';
import { installation, openAll, serveOn } from '../secrets/helpers.ts';

const SECRET = 'rotate me ✓';

t.test('with SECRET_KEY set: a generated new key is printed alone on stdout; --new-key-stdin takes one; a bad new key changes nothing', async (t) => {
  const env = await installation(t);
  const first = await serveOn(t, { ...env, SECRET_KEY: generateKey().toString('hex') });
  t.equal((await first.api('POST', '/api/v1/orgs/demo/repos', { name: 'app' })).status, 201);
  t.equal((await first.api('POST', '/api/v1/repos/demo/app/webhooks', { url: 'http://127.0.0.1:9/hook', secret: SECRET, active: false })).status, 201);
  await first.running.stop();
  const k1 = first.running.services.config.secretKey!;
  t.notOk(fs.existsSync(path.join(env.DATA_DIR, 'secret.key')), 'SECRET_KEY given: no key file');

  const generated = await runCli(['rotate-key'], { ...env, SECRET_KEY: k1.toString('hex') });
  t.equal(generated.code, 0, generated.stderr);
  t.match(generated.stdout, /^[0-9a-f]{64}\n$/, 'the new key alone on stdout');
  t.match(generated.stderr, /SECRET_KEY still holds the old key/);
  const k2 = Buffer.from(generated.stdout.trim(), 'hex');
  t.same((await openAll(env, k2)).secrets, [SECRET]);

  const k3 = generateKey();
  const bad = await runCli(['rotate-key', '--new-key-stdin'], { ...env, SECRET_KEY: k2.toString('hex') }, 'not a key\n');
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^wharf: the new key \(stdin\) is not 64 hexadecimal characters\n$/);
  const wrongOld = await runCli(['rotate-key', '--new-key-stdin'], { ...env, SECRET_KEY: k1.toString('hex') }, `${k3.toString('hex')}\n`);
  t.equal(wrongOld.code, 1, 'the old key must open the database');
  t.match(wrongOld.stderr, /^wharf: SECRET_KEY \(key id [0-9a-f]{8}\) does not open/);
  t.same((await openAll(env, k2)).secrets, [SECRET], 'refused rotations changed nothing');

  const given = await runCli(['rotate-key', '--new-key-stdin'], { ...env, SECRET_KEY: k2.toString('hex') }, `${k3.toString('hex')}\n`);
  t.equal(given.code, 0, given.stderr);
  t.equal(given.stdout, '', 'a key the operator gave is not printed');
  t.same(await openAll(env, k3), { secrets: [SECRET], passwords: [], check: 'wharf secret key check' });
});
