import { randomBytes } from 'node:crypto';
import t from 'tap';
import { buildRepo, startWharf, type TestWharf } from '../helpers/wharf.ts';

/** The label sets of wharf_http_requests_total on /metrics, and the page's size. */
async function requestSeries(w: TestWharf): Promise<{ series: Set<string>; bytes: number }> {
  const text = await (await fetch(`${w.url}/metrics`)).text();
  const series = new Set(
    text
      .split('\n')
      .filter((l) => l.startsWith('wharf_http_requests_total{'))
      .map((l) => l.slice(0, l.lastIndexOf('}') + 1)),
  );
  return { series, bytes: text.length };
}

/** Paths under every prefix Wharf serves, each with a random part: Git, LFS (with and without `.git`), API, web UI. */
function randomPaths(): { method: string; path: string }[] {
  const x = () => randomBytes(6).toString('hex');
  return [
    { method: 'GET', path: `/demo/pub.git/info/lfs/${x()}` },
    { method: 'POST', path: `/demo/pub.git/info/lfs/${x()}/${x()}` },
    { method: 'GET', path: `/demo/pub/info/lfs/objects/${x()}` },
    { method: 'GET', path: `/${x()}/${x()}.git/info/lfs/locks/${x()}` },
    { method: 'PUT', path: `/demo/pub.git/info/lfs/objects/${'a'.repeat(58)}${x().slice(0, 6)}` },
    { method: 'GET', path: `/demo/pub.git/${x()}` },
    { method: 'POST', path: `/${x()}/${x()}.git/git-upload-pack` },
    { method: 'GET', path: `/demo/pub.git/info/refs?service=${x()}` },
    { method: 'GET', path: `/api/v1/${x()}` },
    { method: 'GET', path: `/api/v1/repos/demo/${x()}/issues/${x()}` },
    { method: 'GET', path: `/${x()}` },
    { method: 'GET', path: `/demo/${x()}/${x()}` },
    { method: 'GET', path: `/-/${x()}` },
  ];
}

/** Sends one round of random paths, anonymously. */
async function round(w: TestWharf): Promise<void> {
  for (const { method, path } of randomPaths()) {
    const res = await fetch(`${w.url}${path}`, {
      method,
      body: method === 'GET' ? undefined : '{}',
      headers: { 'content-type': 'application/vnd.git-lfs+json' },
    });
    await res.arrayBuffer();
  }
}

t.test('/metrics labels requests by route template: random Git, LFS, API and UI paths add no series', async (t) => {
  const w = await startWharf(t, { workers: [] });
  await buildRepo(w, 'demo', 'pub', 'public');
  // One round shows every kind of answer once; later rounds differ only in their random parts.
  await round(w);
  const before = await requestSeries(w);
  for (let i = 0; i < 40; i++) await round(w);
  const after = await requestSeries(w);
  t.same(
    [...after.series].filter((s) => !before.series.has(s)).filter((s) => !s.includes('route="/metrics"')),
    [],
    'no new label set',
  );
  t.ok(after.bytes < before.bytes + 2000, `/metrics grew from ${before.bytes} to ${after.bytes} bytes`);
  for (const s of after.series) t.notMatch(s, /route="[^"]*[0-9a-f]{12}/, `no raw path in ${s}`);
  t.ok(
    [...after.series].some((s) => s.includes('route="/:org/:repo/info/lfs/objects/:oid"')),
    'LFS objects are labelled by their template',
  );
});
