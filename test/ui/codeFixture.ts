import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { gitClient, repoUrl, type GitClient } from '../helpers/git.ts';
import type { TestLike, TestWharf } from '../helpers/wharf.ts';
import { signIn } from './browser.ts';

/** A 1×1 PNG: binary (NULs in its header) and an image a browser can draw. */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** Script that would leave a mark on Wharf's origin if a raw file ever ran as a page. */
export const EVIL_HTML = `<!doctype html><html><body onload="localStorage.setItem('pwned','html-onload')"><h1>evil</h1>
<script>window.pwned = 1; localStorage.setItem('pwned', 'html'); document.title = 'pwned';</script></body></html>
`;
export const EVIL_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="localStorage.setItem('pwned','svg-onload')">
<script>window.pwned = 1; localStorage.setItem('pwned', 'svg');</script><rect width="10" height="10"/></svg>
`;

export const README = `# Widgets

See [the guide](docs/guide.md), [the docs folder](docs) and [the site](https://example.com/).

![the logo](img/logo.png)

<script>window.pwned = 1</script> stays text.

[a trap](javascript:window.pwned=1)

| option | default | meaning |
| --- | --- | --- |
| \`WHARF_A_VERY_LONG_CONFIGURATION_VARIABLE_NAME\` | \`https://example.com/a/very/long/default/address/that/does/not/wrap\` | what it does, at some length, so the table is wider than a phone |
`;

/** Lines of src/main.ts; the third is far wider than a phone. */
export const MAIN_TS = `export const greeting = '<b>hello</b>';\n\nexport const long = '${'x'.repeat(600)}';\n`;

/** What the fixture pushed. */
export interface CodeFixture {
  g: GitClient;
  main: string;
  lfsContent: Buffer;
  lfsOid: string;
  bigSize: number;
}

const GITMODULES = '[submodule "lib"]\n\tpath = vendor/lib\n\turl = https://example.com/lib.git\n';
const SUBMODULE_COMMIT = '0123456789abcdef0123456789abcdef01234567';

/**
 * Pushes, with the real git and git-lfs clients, a repository with folders, READMEs with
 * relative links and an image, a binary, a file over the page limit, an LFS file, a
 * submodule, raw HTML and SVG files, a branch `feature/x` and a tag `v1.0`.
 */
export async function pushCodeFixture(t: TestLike, w: TestWharf, fullName: string, token: string): Promise<CodeFixture> {
  const g = gitClient(t);
  await g.ok(['lfs', 'install', '--skip-repo']);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  await g.ok(['lfs', 'track', '*.bin'], { cwd: work });
  const lfsContent = randomBytes(64 * 1024);
  const big = `${'0123456789abcdef'.repeat(4)}\n`.repeat(24 * 1024); // 1.5 MiB of text
  await g.commit(work, 'The widgets', {
    'README.md': README,
    'docs/README.md': '# Docs\n\nBack to [the top](../README.md).\n',
    'docs/guide.md': '## Guide\n\nA *guide* with a [link home](/README.md).\n\n#### Details\n',
    'img/logo.png': PNG,
    'src/main.ts': MAIN_TS,
    'big.txt': big,
    'model.bin': lfsContent,
    'evil.html': EVIL_HTML,
    'evil.svg': EVIL_SVG,
    '.gitmodules': GITMODULES,
  });
  await g.ok(['update-index', '--add', '--cacheinfo', `160000,${SUBMODULE_COMMIT},vendor/lib`], { cwd: work });
  await g.ok(['commit', '-q', '-m', 'Vendor the lib'], { cwd: work });
  const main = (await g.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
  await g.ok(['tag', 'v1.0'], { cwd: work });
  await g.ok(['checkout', '-q', '-b', 'feature/x'], { cwd: work });
  await g.commit(work, 'A feature', { 'feature.txt': 'only on feature/x\n' });
  await g.ok(['checkout', '-q', 'main'], { cwd: work });
  await g.ok(['push', '-q', repoUrl(w, fullName, token), 'main', 'feature/x', 'v1.0'], { cwd: work });
  return { g, main, lfsContent, lfsOid: createHash('sha256').update(lfsContent).digest('hex'), bigSize: big.length };
}

/** Pushes, with a plain git client, a repository holding an LFS pointer to `oid` whose object it never uploaded. */
export async function pushForeignPointer(t: TestLike, w: TestWharf, fullName: string, token: string, oid: string, size: number): Promise<void> {
  const g = gitClient(t);
  const work = path.join(g.dir, 'w');
  await g.ok(['init', '-q', work]);
  await g.commit(work, 'Borrow an object', { 'loot.bin': `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${size}\n` });
  await g.ok(['push', '-q', repoUrl(w, fullName, token), 'main'], { cwd: work });
}

/** The Cookie header of a browser session signed in with `token`, for requests made outside the browser. */
export async function sessionCookie(browser: Browser, w: TestWharf, token: string): Promise<string> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, w, token);
  const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  await context.close();
  return cookie;
}
