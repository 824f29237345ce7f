import fc from 'fast-check';
import t from 'tap';
import net from 'node:net';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, repoUrl } from '../helpers/git.ts';
import { bareDir, commitFiles, setBranch } from '../producers/helpers.ts';
import { check, tally } from './harness.ts';

// Short deadlines, so every stalled client must be cut within a few seconds.
const DEADLINES = { REQUEST_HEADERS_TIMEOUT: '500ms', REQUEST_IDLE_TIMEOUT: '300ms', REQUEST_BODY_TIMEOUT: '1s', GIT_BACKEND_CONCURRENCY: '2' };
/** Longest a stalled connection may stay open after its last byte: the longest deadline, Node's check interval and slack for a busy machine. */
const CLOSED_WITHIN_MS = 4000;

const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, '0') + line;

/** What a client sends whole: the request line and headers, and a body. */
interface Whole {
  head: string;
  body: Buffer;
}

/** Requests on the API, Git and LFS paths, anonymous or signed in, each complete and well formed. */
function requests(adminToken: string, memberToken: string): fc.Arbitrary<Whole> {
  const basic = `Basic ${Buffer.from(`x:${memberToken}`).toString('base64')}`;
  const make = (method: string, path: string, headers: Record<string, string>, body = '') => {
    const bytes = Buffer.from(body);
    const lines = [
      `${method} ${path} HTTP/1.1`,
      'Host: x',
      'Connection: close',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      `Content-Length: ${bytes.length}`,
    ];
    return { head: `${lines.join('\r\n')}\r\n\r\n`, body: bytes };
  };
  const negotiation = pkt('command=fetch\n') + '0001' + pkt(`want ${'0'.repeat(40)}\n`) + pkt('done\n') + '0000';
  return fc.constantFrom(
    make('GET', '/api/v1/meta', {}),
    make('POST', '/api/v1/orgs', { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' }, JSON.stringify({ login: 'x'.repeat(3) })),
    make('POST', '/api/v1/orgs', { 'Content-Type': 'application/json' }, '{"login":"anon"}'),
    make('POST', '/demo/pub.git/git-upload-pack', { 'Content-Type': 'application/x-git-upload-pack-request', 'Git-Protocol': 'version=2' }, negotiation),
    make(
      'POST',
      '/demo/pub.git/git-upload-pack',
      { 'Content-Type': 'application/x-git-upload-pack-request' },
      pkt(`want ${'1'.repeat(40)}\n`) + '0000' + pkt('done\n'),
    ),
    make(
      'POST',
      '/demo/pub.git/git-receive-pack',
      { Authorization: basic, 'Content-Type': 'application/x-git-receive-pack-request' },
      pkt(`${'0'.repeat(40)} ${'1'.repeat(40)} refs/heads/x\0report-status\n`) + '0000PACK\0\0\0\x02',
    ),
    make(
      'POST',
      '/demo/pub.git/info/lfs/objects/batch',
      { 'Content-Type': 'application/vnd.git-lfs+json' },
      JSON.stringify({ operation: 'download', objects: [{ oid: 'a'.repeat(64), size: 1 }] }),
    ),
    make('PUT', `/demo/pub.git/info/lfs/objects/${'b'.repeat(64)}`, { Authorization: basic, 'Content-Type': 'application/octet-stream' }, 'x'.repeat(40)),
  );
}

/** How a client misbehaves: where it stops for good, or how slowly it sends everything. */
const behaviour = fc.oneof(
  fc.record({ kind: fc.constant('stop' as const), where: fc.constantFrom('headers', 'body', 'pkt-line'), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('slow' as const), pieces: fc.integer({ min: 2, max: 8 }), gapMs: fc.integer({ min: 10, max: 150 }) }),
);

type Behaviour = typeof behaviour extends fc.Arbitrary<infer B> ? B : never;

/** Sends (part of) a request as `how` says; resolves with what the server answered once it closed the connection, and how long after the last byte. */
async function client(w: TestWharf, whole: Whole, how: Behaviour): Promise<{ answer: string; afterMs: number; sent: string }> {
  const bytes = Buffer.concat([Buffer.from(whole.head, 'latin1'), whole.body]);
  const head = Buffer.byteLength(whole.head, 'latin1');
  let parts: Buffer[];
  if (how.kind === 'stop') {
    // mid-headers: before the blank line; mid-body: after it, short of the end; mid-pkt-line: inside the body's first four bytes or one line.
    const span = how.where === 'headers' ? [1, head - 2] : how.where === 'body' ? [head, bytes.length - 1] : [head + 1, Math.min(bytes.length - 1, head + 6)];
    const cut = Math.max(1, Math.min(bytes.length - 1, Math.floor(span[0] + how.at * Math.max(0, span[1] - span[0]))));
    parts = [bytes.subarray(0, cut)];
  } else {
    const size = Math.ceil(bytes.length / how.pieces);
    parts = Array.from({ length: how.pieces }, (_, i) => bytes.subarray(i * size, (i + 1) * size)).filter((p) => p.length > 0);
  }
  const socket = net.connect(Number(new URL(w.url).port), '127.0.0.1');
  socket.on('error', () => {});
  let answer = '';
  socket.on('data', (c) => (answer += c.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  for (const [i, part] of parts.entries()) {
    if (i > 0 && how.kind === 'slow') await new Promise((r) => setTimeout(r, how.gapMs));
    if (!socket.destroyed) socket.write(part);
  }
  const last = performance.now();
  const bound = setTimeout(() => socket.destroy(), CLOSED_WITHIN_MS * 3);
  await closed;
  clearTimeout(bound);
  return {
    answer,
    afterMs: performance.now() - last,
    sent: `${how.kind === 'stop' ? `stopped ${how.where} after ${parts[0].length} of ${bytes.length} bytes` : `${parts.length} pieces`}: ${whole.head.split('\r\n')[0]}`,
  };
}

t.test('stalled, slow and partial clients are cut within their deadlines, never get a 5xx, and Git still works', async (t) => {
  const w = await startWharf(t, { workers: [], env: DEADLINES });
  const pub = await buildRepo(w, 'demo', 'pub', 'public');
  const dir = bareDir(w, pub);
  await setBranch(dir, 'main', await commitFiles(dir, [], { 'a.txt': 'a\n' }, 'root'));
  const { token: memberToken } = await buildUser(w, 'member', { org: 'demo', role: 'member' });
  const seen = tally(t, 'stalled clients');
  // Several clients at once per case: they compete for the same backend slots, as an attack would.
  const clients = fc.array(fc.tuple(requests(w.adminToken, memberToken), behaviour), { minLength: 1, maxLength: 4 });
  await check(
    clients,
    async (batch) => {
      const results = await Promise.all(batch.map(([whole, how]) => client(w, whole, how)));
      for (const { answer, afterMs, sent } of results) {
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
        if (status) seen.count(status);
        if (status >= 500) throw new Error(`5xx for ${sent}: ${answer.slice(0, 300)}`);
        if (afterMs > CLOSED_WITHIN_MS) throw new Error(`still open ${Math.round(afterMs)} ms after the last byte: ${sent}`);
      }
    },
    30,
  );

  const g = gitClient(t);
  const lsRemote = await g.run(['ls-remote', repoUrl(w, 'demo/pub')]);
  t.equal(lsRemote.code, 0, `git ls-remote works afterwards: ${lsRemote.stderr}`);
  t.match(lsRemote.stdout, /refs\/heads\/main/);
});
