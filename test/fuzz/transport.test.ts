import fc from 'fast-check';
import t from 'tap';
import { check, fuzzWharf, junkBody, junkSegment, junkText, snapshot, tally } from './harness.ts';

const basic = (token: string) => `Basic ${Buffer.from(`x:${token}`).toString('base64')}`;

/** A git pkt-line, or something that starts like one. */
const pktJunk: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc
    .constantFrom(
      '0000',
      '0009done\n',
      '0032want 0000000000000000000000000000000000000000\n00000009done\n',
      'ffff',
      '0004',
      '000',
      '0014command=ls-refs\n0000',
      `00a0${'0'.repeat(40)} ${'1'.repeat(40)} refs/heads/main\u0000report-status\n0000PACK`,
    )
    .map((s) => new TextEncoder().encode(s)),
);

t.test('Git smart HTTP and LFS, fuzzed: never a 5xx, errors in their own form, no write when refused', async (t) => {
  const { w, memberToken, outsiderToken } = await fuzzWharf(t);
  const callers: Record<string, string | null> = {
    admin: basic(w.adminToken),
    member: basic(memberToken),
    outsider: basic(outsiderToken),
    anonymous: null,
    bad: basic('wharf_nope'),
    junk: 'Basic %%%',
    bearer: `Bearer ${w.adminToken}`,
  };
  const seen = tally(t, 'git+lfs');
  // Mostly real repositories, so requests get past the lookup to the backend and the LFS store.
  const repoPart: fc.Arbitrary<[string, string, string]> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom<[string, string, string]>(['demo', 'pub', '.git'], ['demo', 'app', '.git'], ['demo', 'newrepo', '.git'], ['demo', 'pub', '']),
    },
    { weight: 1, arbitrary: fc.tuple(junkSegment('demo', 'nope'), junkSegment('app', 'pub', 'newrepo', 'nope'), fc.constantFrom('.git', '.git', '')) },
  );
  const oid = fc.oneof(
    fc.constantFrom('a'.repeat(64), '0'.repeat(64), 'A'.repeat(64), 'a'.repeat(63), 'g'.repeat(64), '%00'.repeat(3)),
    junkText.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))),
  );
  const request = fc.oneof(
    fc.record({
      kind: fc.constant('refs'),
      method: fc.constantFrom('GET', 'GET', 'GET', 'POST', 'PUT'),
      rest: fc.constantFrom(
        'info/refs?service=git-upload-pack',
        'info/refs?service=git-upload-pack',
        'info/refs?service=git-receive-pack',
        'info/refs',
        'info/refs?service=%00',
        'info/refs?service=git-upload-pack&service=x',
        'HEAD',
        'objects/info/packs',
      ),
      body: fc.constant(undefined as Uint8Array | undefined),
      type: fc.constant(''),
    }),
    fc.record({
      kind: fc.constant('pack'),
      method: fc.constantFrom('POST', 'POST', 'GET'),
      rest: fc.constantFrom('git-upload-pack', 'git-receive-pack'),
      body: fc.option(pktJunk, { nil: undefined }),
      type: fc.constantFrom('application/x-git-upload-pack-request', 'application/x-git-receive-pack-request', 'text/plain', ''),
      encoding: fc.constantFrom('', '', 'gzip', 'deflate', 'br', 'x%00'),
      protocol: fc.constantFrom('', 'version=2', 'version=%00', 'x'.repeat(300)),
    }),
    fc.record({
      kind: fc.constant('lfs'),
      method: fc.constantFrom('POST', 'POST', 'GET'),
      rest: fc.constantFrom('info/lfs/objects/batch', 'info/lfs/verify', 'info/lfs/locks', 'info/lfs/locks/verify', 'info/lfs/objects'),
      body: junkBody({
        operation: 'upload',
        objects: [{ oid: 'a'.repeat(64), size: 1 }],
        transfers: ['basic'],
        hash_algo: 'sha256',
        oid: 'a'.repeat(64),
        size: 1,
      }).map((s) => new TextEncoder().encode(s)),
      type: fc.constantFrom('application/vnd.git-lfs+json', 'application/json', 'text/plain'),
    }),
    fc.record({
      kind: fc.constant('object'),
      method: fc.constantFrom('GET', 'PUT', 'PUT'),
      rest: oid.map((o) => `info/lfs/objects/${o}`),
      body: fc.option(fc.uint8Array({ maxLength: 64 }), { nil: undefined }),
      type: fc.constantFrom('application/octet-stream', ''),
    }),
  );
  await check(
    fc.record({ repo: repoPart, caller: fc.constantFrom(...Object.keys(callers)), request }),
    async ({ repo: [org, name, suffix], caller, request: r }) => {
      const before = await snapshot(w);
      const headers: Record<string, string> = {};
      if (callers[caller]) headers.authorization = callers[caller]!;
      if (r.type) headers['content-type'] = r.type;
      if ('encoding' in r && r.encoding) headers['content-encoding'] = r.encoding;
      if ('protocol' in r && r.protocol) headers['git-protocol'] = r.protocol;
      const path = `/${org}/${name}${suffix}/${r.rest}`;
      const res = await fetch(w.url + path, { method: r.method, headers, body: r.method === 'GET' || !r.body ? undefined : Buffer.from(r.body) });
      const text = await res.text();
      seen.count(res.status);
      const what = `${r.method} ${path} as ${caller}: ${res.status} ${text.slice(0, 200)}`;
      if (res.status >= 500) throw new Error(`5xx: ${what}`);
      if (res.status >= 400) {
        // LFS and API-style errors are JSON with SPEC §4's error; git reads the status alone.
        if (path.includes('/info/lfs/') || (res.headers.get('content-type') ?? '').includes('json')) {
          const body = JSON.parse(text);
          if (typeof body?.error?.code !== 'string' || typeof body?.error?.message !== 'string') throw new Error(`not an error body: ${what}`);
        }
        if ((await snapshot(w)) !== before) throw new Error(`a refused request changed the database: ${what}`);
      }
    },
    120,
  );
  t.pass('no 5xx; refused requests wrote nothing');
});
