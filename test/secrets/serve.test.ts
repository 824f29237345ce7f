import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runCli } from '../helpers/cli.ts';
import { generateKey } from '../../src/secrets/key.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { installation, serveOn } from './helpers.ts';

t.test(
  'the first start writes the key into DATA_DIR (0600); a real wharf serve with another key, without the key, or with a malformed SECRET_KEY stops with one line and exit 1',
  async (t) => {
    const env = await installation(t);
    const rx = await startReceiver(t);
    const first = await serveOn(t, env);
    const keyFile = path.join(env.DATA_DIR, 'secret.key');
    const text = fs.readFileSync(keyFile, 'utf8');
    t.match(text, /^[0-9a-f]{64}\n$/, 'the key file holds 64 hex characters');
    t.equal(fs.statSync(keyFile).mode & 0o777, 0o600, 'readable by its owner only');
    t.notOk(
      first.logs.some((l) => l.includes(text.trim())),
      'the key is in no log line',
    );
    t.equal((await first.api('POST', '/api/v1/orgs/demo/repos', { name: 'app' })).status, 201);
    const created = await first.api('POST', '/api/v1/repos/demo/app/webhooks', { url: `${rx.url}/hook`, secret: 'first start secret' });
    t.equal(created.status, 201, created.text);
    rx.secrets.set(created.body.id, 'first start secret');
    await first.running.stop();

    const other = generateKey().toString('hex');
    const [wrong, keyless, malformed] = await Promise.all([
      runCli(['serve'], { ...env, SECRET_KEY: other }),
      runCli(['serve'], { ...env, DATA_DIR: path.join(env.DATA_DIR, 'other-node') }),
      runCli(['serve'], { ...env, SECRET_KEY: `${other.slice(0, 60)}wxyz` }),
    ]);
    t.equal(wrong.code, 1, wrong.stderr);
    t.match(
      wrong.stderr,
      /^wharf: SECRET_KEY \(key id [0-9a-f]{8}\) does not open the secrets stored in this database \(sealed with key id [0-9a-f]{8}\); give every node the same SECRET_KEY\n$/,
      'another key: one line naming SECRET_KEY',
    );
    t.equal(keyless.code, 1, keyless.stderr);
    t.match(
      keyless.stderr,
      /^wharf: SECRET_KEY is unset and \S+secret\.key does not exist, but this database's secrets are sealed with key id [0-9a-f]{8}: set SECRET_KEY to the key the other nodes use\n$/,
      'a second node without the key: one line naming SECRET_KEY',
    );
    t.notOk(fs.existsSync(path.join(env.DATA_DIR, 'other-node', 'secret.key')), 'the second node made no key of its own');
    t.equal(malformed.code, 1, malformed.stderr);
    t.match(
      malformed.stderr,
      /^wharf: configuration error: SECRET_KEY: expected 64 hexadecimal characters \(32 bytes\), got 64 characters\n$/,
      'a malformed value: one line naming SECRET_KEY',
    );
    for (const run of [wrong, keyless, malformed])
      t.notOk(run.stderr.includes(other.slice(0, 60)) || run.stdout.includes('listening'), 'no key echoed, nothing served');

    // The same key given as SECRET_KEY on another node opens everything, and signs with the stored secret.
    const again = await serveOn(t, { ...env, SECRET_KEY: text.trim(), DATA_DIR: path.join(env.DATA_DIR, 'node-b') });
    t.equal((await again.api('POST', `/api/v1/webhooks/${created.body.id}/ping`)).status, 202);
    await waitFor(() => rx.received.some((r) => r.event === 'ping' && r.signatureOk), { what: 'the ping from the second node' });
  },
);
