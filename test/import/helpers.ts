import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import type { GitClient } from '../helpers/git.ts';
import type { TestLike, TestWharf } from '../helpers/wharf.ts';
import { waitFor } from '../helpers/wait.ts';

/** An LFS object of a source: its bytes and pointer. */
export interface LfsFile {
  oid: string;
  size: number;
  content: Buffer;
  pointer: string;
}

/** Makes an LFS object of `size` random bytes. */
export function lfsFile(size: number): LfsFile {
  const content = randomBytes(size);
  const oid = createHash('sha256').update(content).digest('hex');
  return { oid, size, content, pointer: `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${size}\n` };
}

/** A source repository: branches, light and annotated tags, a submodule gitlink, LFS pointers. */
export interface Source {
  /** The bare repository. */
  bare: string;
  /** Objects at the source: `kept` is on the default branch, `old` only in history, `absent` never uploaded. */
  lfs: { kept: LfsFile; old: LfsFile; absent: LfsFile };
  submodule: string;
}

/** Builds a source repository under `base/<name>.git` (default branch "trunk", so HEAD is really read from the source). */
export async function buildSource(g: GitClient, base: string, name = 'source', extra: (work: string) => Promise<void> = async () => {}): Promise<Source> {
  const work = path.join(g.dir, `${name}-work`);
  await g.ok(['init', '-q', '-b', 'trunk', work]);
  const lfs = { kept: lfsFile(3000), old: lfsFile(2000), absent: lfsFile(1500) };
  await g.commit(work, 'first', { 'README.md': '# source\n', '.gitattributes': '*.bin filter=lfs diff=lfs merge=lfs -text\n', 'old.bin': lfs.old.pointer });
  await g.ok(['tag', 'v0.1'], { cwd: work });
  await g.commit(work, 'second', {
    'kept.bin': lfs.kept.pointer,
    'absent.bin': lfs.absent.pointer,
    '.gitmodules': '[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n',
  });
  await g.ok(['rm', '-q', 'old.bin'], { cwd: work });
  const submodule = 'a'.repeat(40);
  await g.ok(['update-index', '--add', '--cacheinfo', `160000,${submodule},lib`], { cwd: work });
  await g.ok(['commit', '-q', '-m', 'third: submodule, old.bin gone'], { cwd: work });
  await g.ok(['tag', '-a', 'v1.0', '-m', 'release 1.0'], { cwd: work });
  await g.ok(['checkout', '-q', '-b', 'feature/x'], { cwd: work });
  await g.commit(work, 'feature work');
  await g.ok(['checkout', '-q', 'trunk'], { cwd: work });
  await extra(work);
  const bare = path.join(base, `${name}.git`);
  await g.ok(['clone', '-q', '--mirror', work, bare]);
  return { bare, lfs, submodule };
}

export { freePort, startGitDaemon, waitForPort } from '../helpers/daemon.ts';

/** Polls a job until `done` holds (default: it finished); returns the last answer. */
export async function waitForJob(w: TestWharf, id: number, options: { token?: string; done?: (job: any) => boolean; timeoutMs?: number } = {}): Promise<any> {
  const done = options.done ?? ((job: any) => job.finished_at !== null);
  let last = '';
  return waitFor(
    async () => {
      const answer = await w.api('GET', `/api/v1/repos/import/${id}`, { token: options.token });
      if (answer.status !== 200) throw new Error(`GET import ${id}: ${answer.status} ${answer.text}`);
      last = answer.text;
      return done(answer.body) && answer.body;
    },
    { timeoutMs: options.timeoutMs ?? 120_000, intervalMs: 100, what: `import ${id}` },
  ).catch((err) => {
    throw new Error(`${err.message.split(';')[0]}; last answer: ${last}`);
  });
}

/** Uploads LFS objects to a Wharf repository through its batch API (basic transfer, PUT). */
export async function uploadLfs(w: TestWharf, fullName: string, token: string, files: LfsFile[]): Promise<void> {
  const auth = `Basic ${Buffer.from(`x:${token}`).toString('base64')}`;
  const type = 'application/vnd.git-lfs+json';
  const res = await fetch(`${w.url}/${fullName}.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { authorization: auth, accept: type, 'content-type': type },
    body: JSON.stringify({ operation: 'upload', objects: files.map(({ oid, size }) => ({ oid, size })) }),
  });
  if (res.status !== 200) throw new Error(`batch upload: ${res.status} ${await res.text()}`);
  const answer: any = await res.json();
  for (const object of answer.objects) {
    const file = files.find((f) => f.oid === object.oid)!;
    const upload = object.actions?.upload;
    if (!upload) continue;
    const put = await fetch(upload.href, {
      method: 'PUT',
      headers: { ...upload.header, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(file.content),
    });
    if (put.status >= 300) throw new Error(`upload ${object.oid}: ${put.status} ${await put.text()}`);
  }
}

/** A TCP proxy on loopback in front of a port: paces what the server sends, and can cut a connection mid-transfer. */
export interface Proxy {
  port: number;
  /** Bytes per 50 ms sent to the client; 0 for no limit. */
  rate: number;
  /** When set, the next connection that has sent this many bytes to the client is cut (once). */
  cutAfter: number;
  /** When set, every connection is cut once it has sent this many bytes to the client. */
  cutEvery: number;
  cuts: number;
  /** Bytes sent to clients so far, over every connection. */
  bytes: number;
}

/** Starts a pacing proxy to `target` on loopback; closed when the test ends. */
export async function startProxy(t: TestLike, target: number, options: { rate?: number; cutAfter?: number; cutEvery?: number } = {}): Promise<Proxy> {
  const state: Proxy = { port: 0, rate: options.rate ?? 0, cutAfter: options.cutAfter ?? 0, cutEvery: options.cutEvery ?? 0, cuts: 0, bytes: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    const queue: Buffer[] = [];
    let sent = 0;
    let ended = false;
    const close = () => (client.destroy(), upstream.destroy());
    const pump = setInterval(() => {
      let budget = state.rate || Infinity;
      while (queue.length && budget > 0) {
        const chunk = queue[0];
        const part = chunk.subarray(0, Math.min(chunk.length, budget));
        queue[0] = chunk.subarray(part.length);
        if (queue[0].length === 0) queue.shift();
        budget -= part.length;
        sent += part.length;
        state.bytes += part.length;
        client.write(part);
        if (state.cutEvery && sent >= state.cutEvery) {
          state.cuts++;
          return close();
        }
        if (state.cutAfter && sent >= state.cutAfter) {
          state.cutAfter = 0;
          state.cuts++;
          return close();
        }
      }
      if (ended && queue.length === 0) client.end();
      upstream[queue.length > 64 ? 'pause' : 'resume']();
    }, 50);
    upstream.on('data', (c) => queue.push(c));
    upstream.on('end', () => (ended = true));
    client.on('data', (c) => upstream.write(c));
    client.on('end', () => upstream.end());
    for (const s of [client, upstream]) s.on('error', close);
    client.on('close', () => (clearInterval(pump), sockets.delete(client), close()));
    // An answer that ends with its connection (no length, no chunks) is still paced out whole:
    // the client is ended once the queue is empty, as a real proxy would.
    upstream.on('close', () => (sockets.delete(upstream), (ended = true)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return state;
}

/** Adds `count` commits of `bytesEach` random bytes to a work tree: a source that takes a while to send. */
export async function addBulk(g: GitClient, work: string, count: number, bytesEach: number): Promise<void> {
  for (let i = 0; i < count; i++) await g.commit(work, `bulk ${i}`, { [`bulk/${i}.dat`]: randomBytes(bytesEach) });
}
