import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import t from 'tap';
import { buildUser, startWharf, type TestLike } from '../helpers/wharf.ts';
import { gitClient } from '../helpers/git.ts';
import { buildSource, startGitDaemon, waitForJob } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

/** An HTTP source that answers every request at once, then sends its body one byte every 0.7 s, forever. */
async function slowDrip(t: TestLike): Promise<string> {
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement', 'cache-control': 'no-cache' });
    const timer = setInterval(() => res.write('0'), 700);
    timers.add(timer);
    res.on('close', () => (clearInterval(timer), timers.delete(timer)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const timer of timers) clearInterval(timer);
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as any).port}`;
}

/** A git pkt-line: its length in 4 hex digits, then its bytes. */
function pkt(payload: Buffer | string): Buffer {
  const body = Buffer.from(payload);
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}

/**
 * A git:// daemon that advertises one branch and, once asked for it, sends only
 * side-band progress lines ("Counting objects: N%", a new percent every 200 ms) and never
 * a byte of pack: busy-looking, but nothing arrives.
 */
async function progressOnlyDaemon(t: TestLike): Promise<{ url: string; open: () => number }> {
  const sockets = new Set<net.Socket>();
  const sha = randomBytes(20).toString('hex');
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    let timer: NodeJS.Timeout | undefined;
    let got = '';
    socket.on('close', () => (clearInterval(timer), sockets.delete(socket)));
    socket.once('data', () => {
      socket.write(pkt(`${sha} HEAD\0side-band-64k ofs-delta symref=HEAD:refs/heads/main\n`));
      socket.write(pkt(`${sha} refs/heads/main\n`));
      socket.write('0000');
      socket.on('data', (c) => {
        got += c;
        if (timer || !got.includes('done')) return;
        socket.write(pkt('NAK\n'));
        let n = 0;
        timer = setInterval(() => socket.write(pkt(Buffer.concat([Buffer.from([2]), Buffer.from(`Counting objects: ${n++ % 100}% (${n}/100000)\r`)]))), 200);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { url: `git://127.0.0.1:${(server.address() as net.AddressInfo).port}/busy.git`, open: () => sockets.size };
}

t.test('a git:// source that sends only changing progress lines and no pack stalls out', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_STALL_TIMEOUT: '3s' } });
  const busy = await progressOnlyDaemon(t);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const started = Date.now();
  const created = await w.api('POST', '/api/v1/repos/import', { token, body: { source_url: busy.url, target_org: 'demo', name: 'busy' } });
  t.equal(created.status, 202, created.text);
  const job = await waitForJob(w, created.body.id, { token, timeoutMs: 30_000 });
  t.equal(job.status, 'failed');
  t.match(job.error, /stalled/);
  t.ok(Date.now() - started < 20_000, `failed after ${Date.now() - started} ms`);
});

/** An LFS batch endpoint that answers 500 at once, then drips its body a byte every 0.5 s forever; counts connections still open. */
async function drippingBatch500(t: TestLike): Promise<{ url: string; open: () => number; requests: () => number }> {
  let open = 0;
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    open++;
    req.resume();
    res.writeHead(500, { 'content-type': 'application/vnd.git-lfs+json' });
    res.write('{"message":"');
    const timer = setInterval(() => res.write('x'), 500);
    res.on('close', () => (clearInterval(timer), open--));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => (server.closeAllConnections(), server.close()));
  return { url: `http://127.0.0.1:${(server.address() as any).port}/lfs`, open: () => open, requests: () => requests };
}

t.test('an LFS batch endpoint that answers 500 with a dripping body is cut after the stall time', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_STALL_TIMEOUT: '3s' } });
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const source = await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const lfs = await drippingBatch500(t);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const started = Date.now();
  const created = await w.api('POST', '/api/v1/repos/import', {
    token,
    body: { source_url: daemon.url('source'), target_org: 'demo', name: 'copy', lfs_url: lfs.url },
  });
  t.equal(created.status, 202, created.text);
  const job = await waitForJob(w, created.body.id, { token, timeoutMs: 30_000 });
  t.equal(job.status, 'succeeded', job.error);
  t.same(job.repository.missing_lfs_objects.map((m: any) => m.oid).sort(), [source.lfs.kept.oid, source.lfs.old.oid, source.lfs.absent.oid].sort());
  t.match(job.repository.missing_lfs_objects[0].error, /500/);
  t.ok(Date.now() - started < 20_000, `finished after ${Date.now() - started} ms`);
  t.equal(lfs.requests(), 1);
  await waitFor(() => lfs.open() === 0, { timeoutMs: 5_000, intervalMs: 50, what: 'the dripping answer to be hung up on' }).catch(() => {});
  t.equal(lfs.open(), 0, 'the dripping answer was hung up on');
});

t.test('a slow-drip source fails within the stall time, with a clear error', async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_STALL_TIMEOUT: '3s' } });
  const drip = await slowDrip(t);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  const started = Date.now();
  const created = await w.api('POST', '/api/v1/repos/import', { token, body: { source_url: `${drip}/team/slow.git`, target_org: 'demo', name: 'slow' } });
  t.equal(created.status, 202, created.text);
  const job = await waitForJob(w, created.body.id, { token, timeoutMs: 45_000 });
  t.equal(job.status, 'failed');
  t.match(job.error, /stalled/);
  t.ok(Date.now() - started < 40_000, `failed after ${Date.now() - started} ms, not after git's two minutes`);
});

t.test("one organization's stalled imports do not keep another organization's import queued", async (t) => {
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_CONCURRENCY: '2', IMPORT_STALL_TIMEOUT: '10m' } });
  const drip = await slowDrip(t);
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  await buildSource(g, base);
  const daemon = await startGitDaemon(t, base);
  const evil = await buildUser(w, 'eve', { org: 'evil', role: 'owner' });
  const acme = await buildUser(w, 'ann', { org: 'acme', role: 'owner' });
  const slow = [];
  for (const name of ['drip-1', 'drip-2']) {
    const created = await w.api('POST', '/api/v1/repos/import', { token: evil.token, body: { source_url: `${drip}/${name}.git`, target_org: 'evil', name } });
    t.equal(created.status, 202, created.text);
    slow.push(created.body.id);
  }
  await waitForJob(w, slow[0], { token: evil.token, done: (j) => j.status === 'cloning', timeoutMs: 20_000 });
  const created = await w.api('POST', '/api/v1/repos/import', {
    token: acme.token,
    body: { source_url: daemon.url('source'), target_org: 'acme', name: 'copy' },
  });
  const job = await waitForJob(w, created.body.id, { token: acme.token, timeoutMs: 45_000 });
  t.equal(job.status, 'succeeded', 'the other organization got a slot');
  const states = await Promise.all(slow.map(async (id) => (await w.api('GET', `/api/v1/repos/import/${id}`, { token: evil.token })).body.status));
  t.same(states.sort(), ['cloning', 'queued'], 'evil holds one slot of two; its second import waits');
  for (const id of slow) await w.api('DELETE', `/api/v1/repos/import/${id}`, { token: evil.token });
});
