import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { fetchLfsObjects } from '../../src/remote/lfsFetch.ts';
import { parseHostPolicy } from '../../src/net/hostPolicy.ts';
import { createFsLfsStore } from '../../src/lfs/fsStore.ts';
import { check, SEED } from './harness.ts';
import { startWharf } from '../helpers/wharf.ts';
import { createOrg } from '../../src/domain/accounts.ts';
import { gitClient } from '../helpers/git.ts';
import { startGitDaemon } from '../helpers/daemon.ts';
import { waitForJob } from '../import/helpers.ts';

/** Runs of each property here: every run is real HTTP on loopback, some wait out a stall, so tens. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
/** The stall time of the fetch: short, so a dripping or silent answer ends soon. */
const STALL_MS = 400;

/** How the server answers one request: a status, headers, a body, or a cut connection. */
interface Answer {
  status: number;
  /** Body: the right one for the request, junk, the right one cut short or grown, or none. */
  body: 'right' | 'junk' | 'short' | 'long' | 'wrong' | 'none';
  /** Cut the socket: before the headers, after part of the body, or never. */
  reset: 'none' | 'before' | 'middle';
  /** A content-length that lies, or none. */
  lyingLength: boolean;
  /** Send the body a byte at a time, slower than the stall rule allows. */
  drip: boolean;
  /** A redirect: to where (its next answer follows the chain), and how many times. */
  redirects: number;
  location: 'next' | 'metadata' | 'ftp' | 'junk' | 'missing';
  junkHeader: boolean;
}

const answer: fc.Arbitrary<Answer> = fc.record({
  status: fc.constantFrom(200, 200, 200, 200, 201, 204, 206, 301, 302, 307, 400, 401, 403, 404, 410, 429, 500, 502, 503),
  body: fc.constantFrom('right', 'right', 'right', 'junk', 'short', 'long', 'wrong', 'none'),
  reset: fc.constantFrom('none', 'none', 'none', 'none', 'before', 'middle'),
  lyingLength: fc.boolean(),
  drip: fc.constantFrom(false, false, false, false, false, true),
  redirects: fc.constantFrom(0, 0, 0, 1, 2, 3, 4, 5),
  location: fc.constantFrom('next', 'next', 'next', 'metadata', 'ftp', 'junk', 'missing'),
  junkHeader: fc.boolean(),
});

/** Mostly an honest answer (possibly after redirects), so the paths past it are reached too. */
const HONEST: Answer = { status: 200, body: 'right', reset: 'none', lyingLength: false, drip: false, redirects: 0, location: 'next', junkHeader: false };
const mostlyHonest = (weight: number, redirects: number[]): fc.Arbitrary<Answer> =>
  fc.oneof({ weight, arbitrary: fc.constantFrom(...redirects).map((n) => ({ ...HONEST, redirects: n })) }, { weight: 2, arbitrary: answer });

const scenario = fc.record({
  sizes: fc.array(fc.integer({ min: 0, max: 70_000 }), { minLength: 1, maxLength: 4 }),
  batch: mostlyHonest(4, [0]),
  /** What the batch answer says of each object: a download action, an error, nothing, junk. */
  offers: fc.array(fc.constantFrom('download', 'download', 'download', 'download', 'download', 'error', 'absent', 'junk-href', 'junk-header', 'no-href'), {
    minLength: 4,
    maxLength: 4,
  }),
  downloads: fc.array(mostlyHonest(2, [0, 0, 1, 3]), { minLength: 4, maxLength: 4 }),
});
type Scenario = { sizes: number[]; batch: Answer; offers: string[]; downloads: Answer[] };

/** A file of a scenario: its bytes and oid. */
interface FuzzFile {
  oid: string;
  size: number;
  content: Buffer;
}

/** A loopback LFS server that answers batch (`/lfs/objects/batch`) and downloads (`/dl/<i>/<hop>`) as the current scenario says. */
async function fuzzLfsServer(t: Test): Promise<{ endpoint: string; use(s: Scenario, files: FuzzFile[]): void }> {
  let current: { s: Scenario; files: FuzzFile[] } | null = null;
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    req.on('error', () => {});
    res.on('error', () => {});
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const sc = current;
      if (!sc) return void res.writeHead(503).end();
      const base = `http://127.0.0.1:${(server.address() as any).port}`;
      const m = /^\/(batch|dl)\/(\d+)\/(\d+)$/.exec(req.url!.replace('/lfs/objects/batch', '/batch/0/0'));
      if (!m) return void res.writeHead(404).end();
      const [kind, index, hop] = [m[1], Number(m[2]), Number(m[3])];
      const a = kind === 'batch' ? sc.s.batch : sc.s.downloads[index];
      let right: Buffer;
      if (kind === 'batch') {
        const objects = sc.files.map((f, i) => {
          const offer = sc.s.offers[i];
          if (offer === 'absent') return null;
          if (offer === 'error') return { oid: f.oid, size: f.size, error: { code: 404, message: 'Object does not exist' } };
          const href = offer === 'junk-href' ? 'http://[::1' : `${base}/dl/${i}/0`;
          const download = offer === 'no-href' ? {} : { href, header: offer === 'junk-header' ? 'nope' : { 'x-n': String(i) } };
          return { oid: f.oid, size: f.size, actions: { download } };
        });
        right = Buffer.from(JSON.stringify({ transfer: 'basic', objects: objects.filter(Boolean) }));
      } else right = sc.files[index].content;
      if (a.reset === 'before') return void req.socket.destroy();
      if (a.redirects > hop) {
        const location = {
          next: `${base}/${kind === 'batch' ? 'batch' : 'dl'}/${index}/${hop + 1}`,
          metadata: 'http://169.254.169.254/latest/',
          ftp: 'ftp://127.0.0.1/x',
          junk: 'http://[::1',
          missing: undefined,
        }[a.location];
        res.writeHead(302, location === undefined ? {} : { location });
        return void res.end('moved');
      }
      const body = {
        right,
        junk: randomBytes(37),
        short: right.subarray(0, Math.floor(right.length / 2)),
        long: Buffer.concat([right, Buffer.from('more')]),
        wrong: randomBytes(right.length),
        none: Buffer.alloc(0),
      }[a.body];
      const headers: http.OutgoingHttpHeaders = { 'content-type': kind === 'batch' ? 'application/vnd.git-lfs+json' : 'application/octet-stream' };
      if (a.lyingLength) headers['content-length'] = String(body.length + 10);
      if (a.junkHeader) headers['x-junk'] = 'a'.repeat(2000);
      res.writeHead(a.status, headers);
      if (a.reset === 'middle') return void res.write(body.subarray(0, Math.floor(body.length / 2)), () => req.socket.destroy());
      if (!a.drip) return void (a.lyingLength ? res.write(body, () => req.socket.destroy()) : res.end(body));
      let at = 0;
      const timer = setInterval(() => (at < body.length ? res.write(body.subarray(at, ++at)) : (clearInterval(timer), res.end())), 100);
      timers.add(timer);
      res.on('close', () => (clearInterval(timer), timers.delete(timer)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const timer of timers) clearInterval(timer);
    server.closeAllConnections();
    server.close();
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as any).port}/lfs`,
    use(s, files) {
      current = { s, files };
    },
  };
}

/** The git-lfs pointer text of a file. */
function lfsPointer(f: FuzzFile): string {
  return `version https://git-lfs.github.com/spec/v1\noid sha256:${f.oid}\nsize ${f.size}\n`;
}

/** Random files of the scenario's sizes, with their oids. */
function filesOf(sizes: number[]): FuzzFile[] {
  return sizes.map((size) => {
    const content = randomBytes(size);
    return { oid: createHash('sha256').update(content).digest('hex'), size, content };
  });
}

t.test('LFS batch and downloads answering anything: the process never crashes; every object ends stored and verified, or missing', async (t) => {
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  t.teardown(() => void process.off('uncaughtException', onUncaught));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-fuzz-lfs-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));

  const lfs = await fuzzLfsServer(t);
  const policy = parseHostPolicy(['loopback']);
  let run = 0;
  let storedTotal = 0;
  let missingTotal = 0;
  await check(
    scenario,
    async (s) => {
      run++;
      const files = filesOf(s.sizes);
      lfs.use(s, files);
      const lfsDir = path.join(root, `lfs-${run}`);
      fs.mkdirSync(lfsDir);
      const store = createFsLfsStore(lfsDir);
      const controller = new AbortController();
      const result = await fetchLfsObjects(
        files.map(({ oid, size }) => ({ oid, size })),
        {
          url: new URL('http://127.0.0.1/unused.git'),
          endpoint: lfs.endpoint,
          credentials: null,
          policy,
          lfs: store,
          journal: path.join(root, `journal-${run}`),
          stallMs: STALL_MS,
          signal: controller.signal,
        },
      );
      // Answers still in flight (a cut or dripping body) get a moment to raise whatever they raise.
      await new Promise((r) => setImmediate(r));
      if (uncaught.length) throw new Error(`uncaught: ${String((uncaught[0] as Error)?.stack ?? uncaught[0])}`);
      const stored = result.stored.map((p) => p.oid).sort();
      const missing = result.missing.map((p) => p.oid).sort();
      const all = files.map((f) => f.oid);
      if (JSON.stringify([...stored, ...missing].sort()) !== JSON.stringify([...new Set(all)].sort().flatMap((oid) => all.filter((o) => o === oid)))) {
        throw new Error(`objects neither stored nor missing, or both: stored ${stored}, missing ${missing}`);
      }
      for (const f of files) {
        if (stored.includes(f.oid)) {
          if (!(await buffer(await store.open(f.oid))).equals(f.content)) throw new Error(`stored ${f.oid} differs from its content`);
        } else if ((await store.size(f.oid)) !== null && !files.some((o) => o.oid === f.oid && stored.includes(o.oid)))
          throw new Error(`missing ${f.oid} was written`);
        if (result.missing.some((m) => m.oid === f.oid && typeof m.error !== 'string')) throw new Error('a missing object without a reason');
      }
      storedTotal += stored.length;
      missingTotal += missing.length;
    },
    RUNS,
  );
  t.comment(`fuzz lfs fetch: ${run} runs, ${storedTotal} objects stored, ${missingTotal} missing (FUZZ_SEED=${SEED})`);
  t.ok(storedTotal > 0 && missingTotal > 0, 'both outcomes were reached');
  t.same(uncaught, []);
});

t.test('whole imports against an LFS server answering anything: the node stays up, every job succeeds with each object stored or missing', async (t) => {
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  t.teardown(() => void process.off('uncaughtException', onUncaught));
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback', IMPORT_STALL_TIMEOUT: '1s', LOG_LEVEL: 'warn' } });
  const lfs = await fuzzLfsServer(t);
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const daemon = await startGitDaemon(t, base);
  await createOrg(w.running.services.db, 'fuzz');
  const basic = `Basic ${Buffer.from(`x:${w.adminToken}`).toString('base64')}`;
  let run = 0;
  let storedTotal = 0;
  let missingTotal = 0;
  await check(
    scenario,
    async (s) => {
      run++;
      const files = filesOf(s.sizes);
      const work = path.join(g.dir, `work-${run}`);
      await g.ok(['init', '-q', '-b', 'main', work]);
      await g.commit(work, 'pointers', Object.fromEntries(files.map((f, i) => [`f${i}.bin`, lfsPointer(f)])));
      await g.ok(['clone', '-q', '--mirror', work, path.join(base, `src-${run}.git`)]);
      lfs.use(s, files);
      const created = await w.api('POST', '/api/v1/repos/import', {
        body: { source_url: daemon.url(`src-${run}`), target_org: 'fuzz', name: `copy-${run}`, lfs_url: lfs.endpoint },
      });
      if (created.status !== 202) throw new Error(`import refused: ${created.status} ${created.text}`);
      const job = await waitForJob(w, created.body.id, { timeoutMs: 60_000 });
      if (uncaught.length) throw new Error(`uncaught: ${String((uncaught[0] as Error)?.stack ?? uncaught[0])}`);
      if (job.status !== 'succeeded') throw new Error(`job ${job.status}: ${job.error}`);
      const oids = [...new Set(files.map((f) => f.oid))];
      const missing = new Set<string>(job.repository.missing_lfs_objects.map((m: any) => m.oid));
      if (job.repository.lfs_objects + missing.size !== oids.length) throw new Error(`objects unaccounted for: ${JSON.stringify(job.repository)}`);
      for (const f of files) {
        if (missing.has(f.oid)) continue;
        const res = await fetch(`${w.url}/fuzz/copy-${run}.git/info/lfs/objects/${f.oid}`, { headers: { authorization: basic } });
        const bytes = Buffer.from(await res.arrayBuffer());
        if (res.status !== 200 || !bytes.equals(f.content)) throw new Error(`stored object ${f.oid} is served as ${res.status}, ${bytes.length} bytes`);
      }
      storedTotal += job.repository.lfs_objects;
      missingTotal += missing.size;
    },
    Math.max(4, Math.round(RUNS / 4)),
  );
  t.comment(`fuzz lfs import: ${run} imports, ${storedTotal} objects stored, ${missingTotal} missing (FUZZ_SEED=${SEED})`);
  t.ok(storedTotal > 0 && missingTotal > 0, 'both outcomes were reached');
  t.same(uncaught, []);
});
