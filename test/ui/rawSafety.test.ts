import t from 'tap';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { buildRepo, buildUser, type TestWharf } from '../helpers/wharf.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { EVIL_HTML, PNG, pushCodeFixture, sessionCookie } from './codeFixture.ts';

/** `git cat-file blob` processes this test process started (the server runs in it) still alive. */
function catFilesAlive(): number {
  const out = execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)]).toString();
  return out.split('\n').filter((l) => l.includes('cat-file blob')).length;
}

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end && !check();) await new Promise((r) => setTimeout(r, 50));
}

const RAW_CSP = "default-src 'none'; sandbox";

/** A GET sent as written: no client normalizes `..` or `%2e%2e` away before the server sees it. */
function getAsWritten(w: TestWharf, path: string, cookie = ''): Promise<{ status: number; body: string }> {
  const url = new URL(w.url);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: url.hostname, port: url.port, path, headers: { cookie, accept: 'text/html' } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
  });
}

t.test('raw files never run on Wharf: HTML and SVG are text with nosniff and a sandboxing CSP, other bytes are attachments', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'acme', 'widgets', 'private');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const fx = await pushCodeFixture(t, w, 'acme/widgets', ann.token);
  const { page } = await openBrowser(t);
  await signIn(page, w, ann.token);

  for (const name of ['evil.html', 'evil.svg']) {
    const res = (await page.goto(`${w.url}/acme/widgets/raw/main/${name}`))!;
    t.equal(res.status(), 200, `${name} is served`);
    const headers = res.headers();
    t.equal(headers['content-type'], 'text/plain; charset=utf-8', `${name} as plain text, never its own type`);
    t.equal(headers['x-content-type-options'], 'nosniff');
    t.equal(headers['content-security-policy'], RAW_CSP, 'in a sandbox that loads nothing');
    await page.waitForLoadState('load');
    t.equal(await page.evaluate(() => document.querySelectorAll('script, svg').length), 0, `${name} is shown as text: no script or svg element`);
    t.match(await page.textContent('body'), '<script>window.pwned = 1;', 'its source is what shows');
    t.equal(await page.evaluate(() => (window as any).pwned), undefined, 'its script did not run');
  }
  // The marker would be on Wharf's own origin: a page of Wharf reads it.
  await page.goto(`${w.url}/acme/widgets`);
  t.equal(await page.evaluate(() => localStorage.getItem('pwned')), null, 'no raw file left a mark on the origin');

  // The blob page of the same file shows its text, escaped.
  await page.goto(`${w.url}/acme/widgets/blob/main/evil.html`);
  t.equal(await page.textContent('#L2'), EVIL_HTML.split('\n')[1]);
  t.equal(await page.evaluate(() => (window as any).pwned), undefined);

  const cookie = await page
    .context()
    .cookies()
    .then((cs) => cs.map((c) => `${c.name}=${c.value}`).join('; '));
  const png = await fetch(`${w.url}/acme/widgets/raw/main/img/logo.png`, { headers: { cookie } });
  t.equal(png.headers.get('content-type'), 'application/octet-stream', 'binary bytes are never given a type a browser renders');
  t.equal(png.headers.get('content-disposition'), `attachment; filename="logo.png"; filename*=UTF-8''logo.png`);
  t.equal(png.headers.get('x-content-type-options'), 'nosniff');
  t.equal(png.headers.get('content-security-policy'), RAW_CSP);
  t.ok(Buffer.from(await png.arrayBuffer()).equals(PNG), 'the exact bytes');

  // A file over the page limit streams whole, its length known up front.
  const big = await fetch(`${w.url}/acme/widgets/raw/main/big.txt`, { headers: { cookie } });
  t.equal(big.status, 200);
  t.equal(Number(big.headers.get('content-length')), fx.bigSize);
  const text = await big.text();
  t.equal(text.length, fx.bigSize, 'every byte');
  t.ok(text.startsWith('0123456789abcdef'));
  // A HEAD or a reader who leaves early ends git: no `cat-file` is left behind.
  const head = await fetch(`${w.url}/acme/widgets/raw/main/big.txt`, { method: 'HEAD', headers: { cookie } });
  t.equal(Number(head.headers.get('content-length')), fx.bigSize, 'HEAD gives the length');
  const abort = new AbortController();
  const partial = await fetch(`${w.url}/acme/widgets/raw/main/big.txt`, { headers: { cookie }, signal: abort.signal });
  await partial.body!.getReader().read();
  abort.abort();
  await waitFor(() => catFilesAlive() === 0);
  t.equal(catFilesAlive(), 0, 'no git cat-file outlives its answer');
  // A raw folder is not a file.
  t.equal((await fetch(`${w.url}/acme/widgets/raw/main/src`, { headers: { cookie } })).status, 404);
});

t.test('addresses that escape or could be read as options are 404 pages, never a 5xx', async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'acme', 'widgets', 'public');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  await pushCodeFixture(t, w, 'acme/widgets', ann.token);
  t.equal((await getAsWritten(w, '/acme/widgets/raw/main/src/main.ts')).status, 200, 'the file itself is there');
  for (const path of [
    '/acme/widgets/raw/main/../../../../etc/passwd',
    '/acme/widgets/raw/main/src/../README.md',
    '/acme/widgets/raw/main/%2e%2e/%2e%2e/config',
    '/acme/widgets/tree/-n',
    '/acme/widgets/tree/--output=x',
    '/acme/widgets/raw/main/-n',
    '/acme/widgets/blob/main/src%5Cmain.ts',
    '/acme/widgets/tree/main/.',
    '/acme/widgets/tree/main//src',
    '/acme/widgets/tree/HEAD',
  ]) {
    const res = await getAsWritten(w, path);
    t.equal(res.status, 404, path);
    t.match(res.body, /<h1>Not found<\/h1>/, `${path}: the HTML 404 page`);
  }
  // A NUL or invalid UTF-8 never reaches a page: the input guard answers first, a 404 (no file can have such a name).
  for (const path of ['/acme/widgets/blob/main/src%00/main.ts', '/acme/widgets/raw/main/src/main.ts%00', '/acme/widgets/raw/main/%E0%A4%A']) {
    const res = await getAsWritten(w, path);
    t.equal(res.status, 404, path);
    t.notMatch(res.body, 'greeting', 'nothing of the file');
  }
});

t.test("a private repository's code pages and raw files are 404 to anonymous visitors and to another organization's owner", async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'acme', 'widgets', 'private');
  const ann = await buildUser(w, 'ann', { org: 'acme', role: 'member' });
  const bob = await buildUser(w, 'bob', { org: 'rival', role: 'owner' });
  await pushCodeFixture(t, w, 'acme/widgets', ann.token);
  const { browser } = await openBrowser(t);
  const member = await sessionCookie(browser, w, ann.token);
  const rival = await sessionCookie(browser, w, bob.token);
  const pages = ['', '/tree/main', '/tree/main/docs', '/blob/main/README.md', '/raw/main/README.md', '/raw/main/model.bin', '/blob/feature/x/feature.txt'];
  for (const p of pages) t.equal((await getAsWritten(w, `/acme/widgets${p}`, member)).status, 200, `a member reads ${p || 'the repository page'}`);
  for (const p of pages) {
    const missing = await getAsWritten(w, `/acme/nothing${p}`);
    for (const [who, cookie] of [
      ['anonymous', ''],
      ["another organization's owner", rival],
    ]) {
      const res = await getAsWritten(w, `/acme/widgets${p}`, cookie);
      t.equal(res.status, 404, `${who}: ${p || 'the repository page'} is 404`);
      t.notMatch(res.body, /Widgets|README|window\.pwned|0123456789/, 'nothing of the repository shows');
      const said = (body: string) => body.match(/<section class="card error-page">.*<\/section>/s)?.[0].replace(/widgets|nothing/g, '…');
      t.equal(said(res.body), said(missing.body), 'the same page as a repository that does not exist');
    }
  }
});
