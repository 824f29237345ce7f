import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { gitClient } from '../helpers/git.ts';
import { createImportRunner } from '../../src/import/runner.ts';
import { parseHostPolicy } from '../../src/net/hostPolicy.ts';
import { buildSource, startGitDaemon, waitForJob } from './helpers.ts';

async function nothingCreated(t: any, w: TestWharf, name: string) {
  t.notOk(fs.existsSync(path.join(w.config.reposDir, 'demo', `${name}.git`)), `no directory for ${name}`);
  t.equal((await w.api('GET', `/api/v1/repos/demo/${name}`)).status, 404, `no repository ${name}`);
}

t.test('refused at request time: 422 naming the field, nothing created', async (t) => {
  const w = await startWharf(t, { workers: [] }); // IMPORT_ALLOWED_HOSTS=external, the default
  const post = (body: any, token?: string) => w.api('POST', '/api/v1/repos/import', { body, token });
  const sources = [
    'file:///etc',
    '/etc',
    'ext::sh -c id',
    '-uhelp',
    'ssh://git@127.0.0.1/x.git',
    'git+ssh://127.0.0.1/x.git',
    'git@example.com:a/b.git',
    // Under `external`, loopback, private and metadata addresses in any spelling, and names that resolve to them.
    'http://127.0.0.1:9/x.git',
    'http://127.1/x.git',
    'http://2130706433/x.git',
    'http://[::1]/x.git',
    'http://[::ffff:127.0.0.1]/x',
    'git://10.1.2.3/x.git',
    'https://192.168.1.1/x.git',
    'http://169.254.169.254/latest',
    'http://0.0.0.0/x.git',
    'http://localhost/x.git',
  ];
  for (const source_url of sources) {
    const answer = await post({ source_url, target_org: 'demo', name: 'x' });
    t.equal(answer.status, 422, `${source_url}: 422`);
    t.equal(answer.body.error.details[0]?.path, '/source_url', source_url);
  }
  t.match((await post({ source_url: 'http://127.0.0.1/x.git', target_org: 'demo', name: 'x' })).body.error.details[0].message, /IMPORT_ALLOWED_HOSTS/);
  const ok = { source_url: 'https://93.184.215.14/x.git', target_org: 'demo', name: 'x' };
  for (const bad of [
    { ...ok, visibility: 'secret' },
    { ...ok, name: '../x' },
    { ...ok, name: 'x.git' },
    { ...ok, name: 'a..b' },
    { ...ok, extra: 1 },
    { target_org: 'demo', name: 'x' },
    { ...ok, source_url: 5 },
  ]) {
    t.equal((await post(bad)).status, 422, JSON.stringify(bad));
  }
  t.equal((await w.api('GET', '/api/v1/repos/import')).body.length, 0, 'no job was created');
  await nothingCreated(t, w, 'x');

  // Roles (SPEC §3): not in the org or no such org 404, a member 403.
  const { token: member } = await buildUser(w, 'mel', { org: 'demo', role: 'member' });
  const { token: stranger } = await buildUser(w, 'stan', { org: 'elsewhere', role: 'owner' });
  t.equal((await post({ ...ok, source_url: 'http://127.0.0.1/x.git' }, member)).status, 403);
  t.equal((await post(ok, stranger)).status, 404);
  t.equal((await post({ ...ok, target_org: 'nope' })).status, 404);
  t.equal((await w.api('GET', '/api/v1/repos/import?org=demo', { token: stranger })).status, 404);
  t.equal((await w.api('GET', '/api/v1/repos/import?org=demo', { token: member })).status, 403);
  t.equal((await w.api('GET', '/api/v1/repos/import?limit=101')).status, 422);
  t.equal((await w.api('GET', '/api/v1/repos/import/abc')).status, 404);
  t.equal((await w.api('GET', '/api/v1/repos/import/999')).status, 404);
  await buildRepo(w, 'import', 'tools');
  t.equal((await w.api('GET', '/api/v1/repos/import/tools')).body.full_name, 'import/tools', 'an organization named "import" keeps its repositories');

  // Name taken: by a repository, then by a live job; a canceled job frees it.
  await buildRepo(w, 'demo', 'taken');
  t.equal((await post({ ...ok, name: 'taken' })).status, 409);
  const live = await post(ok);
  t.equal(live.status, 202);
  t.equal((await post(ok)).status, 409, 'a live job holds the name');
  t.equal((await w.api('GET', `/api/v1/repos/import/${live.body.id}`, { token: stranger })).status, 404);
  t.equal((await w.api('DELETE', `/api/v1/repos/import/${live.body.id}`, { token: member })).status, 403);
  const canceled = await w.api('DELETE', `/api/v1/repos/import/${live.body.id}`);
  t.equal(canceled.status, 200);
  t.equal(canceled.body.status, 'canceled');
  t.equal((await w.api('DELETE', `/api/v1/repos/import/${live.body.id}`)).status, 409, 'already finished');
  t.equal((await post(ok)).status, 202, 'name free again');
});

t.test('refused at clone time: the policy is checked again on the address connected to', async (t) => {
  // Accepted under `loopback`, run by a runner whose policy is `external`: as if the name now resolved inside.
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' }, workers: [] });
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const created = await w.api('POST', '/api/v1/repos/import', { body: { source_url: daemon.url('source'), target_org: 'demo', name: 'late' } });
  t.equal(created.status, 202);
  const services = w.running.services;
  const runner = createImportRunner({ ...services, config: { ...services.config, importAllowedHosts: parseHostPolicy(['external']) } }, { pollMs: 100 });
  await runner.start();
  t.teardown(() => runner.stop());
  const job = await waitForJob(w, created.body.id);
  t.equal(job.status, 'failed');
  t.match(job.error, /host policy \(IMPORT_ALLOWED_HOSTS\)/);
  await nothingCreated(t, w, 'late');
});

t.test('an HTTP source that redirects to a loopback address: a failed job naming the policy', async (t) => {
  // The redirector is allowed (127.0.0.2); what it points at (this Wharf, on 127.0.0.1) is not, and no redirect is followed.
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: '127.0.0.2/32' } });
  await buildRepo(w, 'demo', 'internal-secret');
  let hits = 0;
  const redirector = http.createServer((req, res) => {
    hits++;
    res.writeHead(302, { location: `${w.url}/demo/internal-secret.git${req.url!.replace(/^\/[^?]*?\.git/, '')}` });
    res.end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.2', resolve));
  t.teardown(() => redirector.close());
  const port = (redirector.address() as any).port;
  const created = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: `http://127.0.0.2:${port}/bounce.git`, target_org: 'demo', name: 'bounced' },
  });
  t.equal(created.status, 202, created.text);
  const job = await waitForJob(w, created.body.id);
  t.equal(job.status, 'failed');
  t.match(job.error, /redirect.*host policy/);
  t.ok(hits > 0, 'the redirector was asked');
  await nothingCreated(t, w, 'bounced');
});
