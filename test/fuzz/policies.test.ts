import fc from 'fast-check';
import t from 'tap';
import { addressAllowed, parseHostPolicy, resolveAllowed } from '../../src/net/hostPolicy.ts';
import { buildRepo, startWharf } from '../helpers/wharf.ts';
import { check, fuzzWharf, junkSegment, RUNS, tally } from './harness.ts';

/** Cloud metadata IPv4 addresses (the policy's list) and loopback addresses, as four bytes. */
const METADATA_V4: [number, number, number, number][] = [
  [169, 254, 169, 254],
  [169, 254, 170, 2],
  [169, 254, 0, 23],
  [100, 100, 100, 200],
  [168, 63, 129, 16],
  [192, 0, 0, 192],
];
const loopbackV4 = fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255));

/** One number in a radix the WHATWG URL parser reads: decimal, hex (`0x`, any case) or octal (leading 0). */
function spell(n: number, radix: fc.Arbitrary<'dec' | 'hex' | 'HEX' | 'oct'>): fc.Arbitrary<string> {
  return radix.map((r) =>
    r === 'dec' ? String(n) : r === 'hex' ? `0x${n.toString(16)}` : r === 'HEX' ? `0X${n.toString(16).toUpperCase()}` : `0${n.toString(8)}`,
  );
}
const radix = fc.constantFrom('dec', 'hex', 'HEX', 'oct') as fc.Arbitrary<'dec' | 'hex' | 'HEX' | 'oct'>;

/** An IPv4 address in every host spelling the URL parser accepts: 4, 3, 2 or 1 parts, each in its own radix, maybe a trailing dot. */
function ipv4Host([a, b, c, d]: number[]): fc.Arbitrary<string> {
  const parts = fc.constantFrom([a, b, c, d], [a, b, (c << 8) | d], [a, (b << 16) | (c << 8) | d], [((a << 24) | (b << 16) | (c << 8) | d) >>> 0]);
  return fc
    .tuple(
      parts.chain((ns) => fc.tuple(...ns.map((n) => spell(n, radix)))),
      fc.boolean(),
    )
    .map(([ps, dot]) => ps.join('.') + (dot ? '.' : ''));
}

const hex4 = (n: number) => n.toString(16);
const group = fc.nat(0xffff).map(hex4);

/** An IPv6 URL host that carries the IPv4 address: mapped, translated, compatible, NAT64 (well-known and local-use), 6to4, Teredo. */
function ipv6Embedding([a, b, c, d]: number[]): fc.Arbitrary<string> {
  const hi = (a << 8) | b;
  const lo = (c << 8) | d;
  const dotted = `${a}.${b}.${c}.${d}`;
  const tail = fc.constantFrom(`${hex4(hi)}:${hex4(lo)}`, dotted);
  return fc
    .oneof(
      tail.map((x) => `::ffff:${x}`),
      tail.map((x) => `0:0:0:0:0:FFFF:${x}`),
      tail.map((x) => `::ffff:0:${x}`),
      // IPv4-compatible; 127.0.0.0 and 127.0.0.1 stay distinct from :: and ::1 because a is 127 or higher.
      tail.map((x) => `::${x}`),
      tail.map((x) => `64:ff9b::${x}`),
      fc.tuple(fc.nat(0xffff), tail).map(([g, x]) => `64:ff9b:1:${hex4(g)}::${x}`),
      tail.map((x) => `64:ff9b:1::${x}`),
      fc.tuple(group, group).map(([s, i]) => `2002:${hex4(hi)}:${hex4(lo)}:${s}::${i}`),
      fc.tuple(group, group, group, group).map(([s1, s2, flags, port]) => `2001:0:${s1}:${s2}:${flags}:${port}:${hex4(hi ^ 0xffff)}:${hex4(lo ^ 0xffff)}`),
    )
    .map((h) => `[${h}]`);
}

/** IPv6 metadata addresses in their spellings: compressed, expanded, zero-padded, upper case. */
const metadataV6 = fc
  .constantFrom('fd00:ec2::254', 'fd00:0ec2:0000:0000:0000:0000:0000:0254', 'FD00:EC2:0:0:0:0:0:254', 'fd20:ce::254', 'fd20:00ce::0254', 'FD20:CE:0:0::254')
  .map((h) => `[${h}]`);

const metadataHost = fc.oneof(fc.constantFrom(...METADATA_V4).chain(ipv4Host), fc.constantFrom(...METADATA_V4).chain(ipv6Embedding), metadataV6);
const loopbackHost = fc.oneof(loopbackV4.chain(ipv4Host), loopbackV4.chain(ipv6Embedding));

t.test('host policy, fuzzed: metadata addresses in any spelling are refused under private and *, loopback ones under private', async (t) => {
  const policies = {
    private: parseHostPolicy(['private']),
    any: parseHostPolicy(['*']),
    privateAndNames: parseHostPolicy(['private', 'external', '*.internal']),
  };
  const refused = async (policy: ReturnType<typeof parseHostPolicy>, url: string) => {
    const hostname = new URL(url).hostname;
    if (addressAllowed(policy, hostname, 'metadata.google.internal')) throw new Error(`${url} (${hostname}) allowed`);
    await resolveAllowed(policy, hostname).then(
      () => {
        throw new Error(`${url} (${hostname}) allowed at connect time`);
      },
      (err) => {
        if (err?.code !== 'EHOSTPOLICY') throw err;
      },
    );
  };
  await check(
    metadataHost,
    async (host) => {
      for (const policy of Object.values(policies)) await refused(policy, `http://${host}/`);
    },
    RUNS * 5,
  );
  await check(
    loopbackHost,
    async (host) => {
      await refused(policies.private, `http://${host}/`);
      await refused(parseHostPolicy(['external']), `http://${host}/`);
    },
    RUNS * 5,
  );
  t.pass(`${RUNS * 10} spellings refused`);
});

t.test('host policy, fuzzed through the API: a webhook to a metadata address is a 422 under *', async (t) => {
  const w = await startWharf(t, { workers: [], env: { WEBHOOK_ALLOWED_HOSTS: '*' } });
  await buildRepo(w, 'demo', 'app');
  const seen = tally(t, 'metadata webhooks');
  await check(
    metadataHost,
    async (host) => {
      const answer = await w.api('POST', '/api/v1/repos/demo/app/webhooks', { body: { url: `http://${host}/hook` } });
      seen.count(answer.status);
      if (answer.status !== 422) throw new Error(`${host}: ${answer.status} ${answer.text}`);
    },
    Math.min(RUNS, 60),
  );
});

/** The label sets of wharf_http_requests_total on /metrics. */
async function requestSeries(url: string): Promise<string[]> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('wharf_http_requests_total{'))
    .map((l) => l.slice(0, l.lastIndexOf('}') + 1));
}

t.test('/metrics, fuzzed: random Git, LFS, API and UI paths leave the label sets bounded and free of raw paths', async (t) => {
  const { w } = await fuzzWharf(t);
  const seen = tally(t, 'metrics labels');
  // Marked random segments, so a raw path in a label is recognisable.
  const marked = fc.stringMatching(/^z[0-9a-f]{8}$/);
  const segment = fc.oneof(marked, junkSegment('demo', 'pub', 'app', 'info', 'lfs', 'objects', 'batch', 'locks', 'verify', 'issues', 'repos'));
  const path = fc.oneof(
    fc.tuple(segment, segment).map(([x, y]) => `/demo/pub.git/info/lfs/${x}/${y}`),
    fc.tuple(segment, segment).map(([r, x]) => `/demo/${r}/info/lfs/objects/${x}`),
    fc.tuple(segment, segment).map(([o, r]) => `/${o}/${r}.git/info/lfs/objects/batch`),
    fc.tuple(segment, segment).map(([r, x]) => `/demo/${r}.git/${x}`),
    fc.tuple(segment, fc.constantFrom('git-upload-pack', 'git-receive-pack', 'info/refs?service=git-upload-pack')).map(([r, x]) => `/demo/${r}.git/${x}`),
    fc.tuple(segment, segment).map(([x, y]) => `/api/v1/${x}/${y}`),
    fc.tuple(segment, segment).map(([r, n]) => `/api/v1/repos/demo/${r}/issues/${n}`),
    fc.tuple(segment, segment, segment).map(([o, r, x]) => `/${o}/${r}/${x}`),
    segment.map((x) => `/-/${x}`),
  );
  await check(fc.tuple(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'), path), async ([method, p]) => {
    const res = await fetch(`${w.url}${p}`, { method, body: method === 'GET' ? undefined : '{}', headers: { 'content-type': 'application/json' } });
    seen.count(res.status);
    await res.arrayBuffer();
  });
  const series = await requestSeries(w.url);
  for (const s of series) if (/z[0-9a-f]{8}/.test(s)) t.fail(`a raw path in ${s}`);
  // Four methods, a few dozen templates and statuses: far fewer than the requests, whatever the seed.
  t.ok(series.length <= 120, `${series.length} label sets after ${RUNS} random paths`);
});
