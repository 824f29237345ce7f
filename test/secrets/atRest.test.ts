import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { createOrg } from '../../src/domain/accounts.ts';
import { createRepository } from '../../src/domain/repos.ts';
import { open } from '../../src/secrets/cipher.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildWebhook, raise } from '../delivery/build.ts';
import { startProxy, waitForJob } from '../import/helpers.ts';

t.test(
  'webhook secrets and import credentials are sealed in the database (and SQLite WAL), in no answer or log line; deliveries verify; credentials cleared at the end',
  async (t) => {
    // The source: a private repository on another Wharf, behind a slow proxy so the import stays running while we look.
    const upstream = await startWharf(t);
    const g = gitClient(t);
    const work = path.join(g.dir, 'src');
    await g.ok(['init', '-q', work]);
    await g.commit(work, 'first', { 'README.md': 'hello\n' });
    const upOrg = await createOrg(upstream.running.services.db, 'up');
    await createRepository(upstream.running.services, { org: upOrg, name: 'proj' });
    const { token: password } = await buildUser(upstream, 'sam', { org: 'up', role: 'owner' });
    await g.ok(['push', '-q', repoUrl(upstream, 'up/proj', password), 'main'], { cwd: work });
    const proxy = await startProxy(t, Number(new URL(upstream.url).port), { rate: 20 });

    const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', WEBHOOK_ALLOWED_HOSTS: 'loopback' } });
    const db = w.running.services.db;
    const key = w.config.secretKey!;
    const repo = await buildRepo(w, 'acme', 'app');
    const rx = await startReceiver(t);
    const secret = `known-secret-${randomBytes(8).toString('hex')}`;
    const hook = await buildWebhook(w, repo, rx, { secret, events: ['push'] });
    const generated = await buildWebhook(w, repo, rx, { url: `${rx.url}/generated`, events: ['push'] });
    const job = await w.api('POST', '/api/v1/repos/import', {
      body: { source_url: `http://127.0.0.1:${proxy.port}/up/proj.git`, target_org: 'demo', name: 'copy', auth_username: 'sam', auth_password: password },
    });
    t.equal(job.status, 202, job.text);
    await waitForJob(w, job.body.id, { done: (j) => j.status === 'cloning' });

    const plaintexts = [secret, generated.secret, generated.secret.slice('whsec_'.length), password];
    const stored = await db('webhooks').orderBy('id').select('secret');
    t.same(
      stored.map((r) => open(key, 'webhooks.secret', r.secret)),
      [secret, generated.secret],
      'the stored values open to the secrets',
    );
    const running = await db('import_jobs').where('id', job.body.id).first();
    t.equal(running.status, 'cloning');
    t.same(
      JSON.parse(open(key, 'import_jobs.credentials', running.credentials)),
      { username: 'sam', password },
      'credentials stored sealed while the job runs',
    );
    if (w.database.dialect === 'sqlite') {
      const file = w.database.url.slice('sqlite:'.length);
      const files = [file, `${file}-wal`].filter((f) => fs.existsSync(f));
      t.ok(files.includes(`${file}-wal`), 'the WAL is there to be searched');
      const bytes = Buffer.concat(files.map((f) => fs.readFileSync(f)));
      t.ok(bytes.includes(Buffer.from('known-secret-')) === false && bytes.length > 0, 'no known-secret- prefix anywhere in the file or WAL');
      for (const p of plaintexts) t.equal(bytes.indexOf(Buffer.from(p)), -1, 'no plaintext in the SQLite file or its WAL');
    } else {
      const raw = await db.raw('SELECT secret AS value FROM webhooks UNION ALL SELECT credentials FROM import_jobs WHERE credentials IS NOT NULL');
      t.equal(raw.rows.length, 3);
      for (const { value } of raw.rows) {
        t.match(value, /^v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/, 'the column holds the sealed form');
        for (const p of plaintexts) t.notOk(value.includes(p), 'no plaintext in the column');
      }
    }

    // Deliveries are signed with the secret the stored value opens to (the receiver checks).
    await raise(w, repo, [{ type: 'push' }]);
    await waitFor(() => rx.received.length === 4, { what: 'pings and pushes to both webhooks' });
    t.ok(
      rx.received.every((r) => r.signatureOk),
      'every signature verifies with the known secret',
    );
    t.ok(
      rx.received.filter((r) => r.hookId === generated.id).every((r) => r.standardOk),
      'Standard Webhooks signatures verify',
    );
    // A new, long secret (a sealed 1,024-character secret is longer than the column once was).
    const longSecret = `L${randomBytes(600).toString('hex')}`.slice(0, 1024);
    const patched = await w.api('PATCH', `/api/v1/repos/acme/app/webhooks/${hook.id}`, { body: { secret: longSecret } });
    t.equal(patched.status, 200, patched.text);
    rx.secrets.set(hook.id, longSecret);
    await raise(w, repo, [{ type: 'push' }]);
    await waitFor(() => rx.received.length === 6, { what: 'the push signed with the new secret' });
    // The receiver checks when read, with the secret it now holds: only the new deliveries.
    t.ok(
      rx.received.slice(4).every((r) => r.signatureOk),
      'the changed secret signs the next delivery',
    );
    t.equal(open(key, 'webhooks.secret', (await db('webhooks').where('id', hook.id).first()).secret), longSecret);

    proxy.rate = 0;
    const done = await waitForJob(w, job.body.id);
    t.equal(done.status, 'succeeded', done.error);
    t.equal((await db('import_jobs').where('id', job.body.id).first()).credentials, null, 'credentials cleared when the job ended');

    const answers = [
      await w.api('GET', '/api/v1/repos/acme/app/webhooks'),
      await w.api('GET', `/api/v1/repos/acme/app/webhooks/${hook.id}`),
      await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`),
      await w.api('GET', `/api/v1/repos/import/${job.body.id}`),
      await w.api('GET', '/api/v1/repos/import'),
      patched,
      job,
    ];
    const deliveries = (await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries`)).body.deliveries;
    for (const d of deliveries) answers.push(await w.api('GET', `/api/v1/webhooks/${hook.id}/deliveries/${d.id}`));
    for (const p of [...plaintexts, longSecret]) {
      t.notOk(
        answers.some((a) => a.text.includes(p)),
        'no secret or password in any API answer',
      );
      t.notOk(
        w.logs.some((l) => l.includes(p)),
        'no secret or password in any log line',
      );
    }
    t.notOk(
      answers.some((a) => /v1:[0-9a-f]{8}:/.test(a.text)),
      'nor their sealed form',
    );
  },
);
