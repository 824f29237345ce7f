import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { startWharf } from '../helpers/wharf.ts';
import { gitClient, refList, type GitClient } from '../helpers/git.ts';
import { repoDir } from '../../src/git/bare.ts';
import { createImportRunner } from '../../src/import/runner.ts';
import { startGitDaemon, startProxy, waitForJob } from './helpers.ts';

/**
 * A bare source of `commits` commits on trunk, each rewriting one file with `bytesEach`
 * random bytes (so the tip is small and the history is big), tags spread through the
 * history, and a side branch. Written with fast-import: one git run.
 */
async function generatedSource(g: GitClient, bare: string, commits: number, bytesEach: number, tags: number): Promise<void> {
  await g.ok(['init', '-q', '--bare', '-b', 'trunk', bare]);
  const parts: Buffer[] = [];
  const text = (s: string) => parts.push(Buffer.from(s));
  for (let i = 1; i <= commits; i++) {
    const data = randomBytes(bytesEach);
    text(`blob\nmark :${i * 2}\ndata ${data.length}\n`);
    parts.push(data, Buffer.from('\n'));
    const message = `commit ${i}\n`;
    text(`commit refs/heads/trunk\nmark :${i * 2 + 1}\ncommitter Ada <ada@example.com> ${1_700_000_000 + i} +0000\ndata ${message.length}\n${message}`);
    if (i > 1) text(`from :${i * 2 - 1}\n`);
    text(`M 100644 :${i * 2} data.bin\nM 100644 inline count.txt\ndata ${String(i).length + 1}\n${i}\n\n`);
  }
  for (let k = 1; k <= tags; k++) {
    const at = Math.max(1, Math.round((k * commits) / (tags + 1)));
    const message = `release ${k}\n`;
    text(`tag v${k}\nfrom :${at * 2 + 1}\ntagger Ada <ada@example.com> ${1_700_000_000 + at} +0000\ndata ${message.length}\n${message}\n`);
  }
  text(`reset refs/heads/side\nfrom :${Math.round(commits / 2) * 2 + 1}\n\n`);
  text(`commit refs/heads/side\ncommitter Ada <ada@example.com> ${1_800_000_000} +0000\ndata 5\nside\nM 100644 inline side.txt\ndata 5\nside\n\n`);
  await g.ok(['fast-import', '--quiet'], { cwd: bare, input: Buffer.concat(parts) });
  await g.ok(['repack', '-a', '-d', '-q'], { cwd: bare });
}

function packBytes(bare: string): number {
  const dir = path.join(bare, 'objects', 'pack');
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.pack'))
    .reduce((sum, n) => sum + fs.statSync(path.join(dir, n)).size, 0);
}

t.test('a link that breaks every connection after a third of the pack: the import completes in bounded steps', async (t) => {
  const g = gitClient(t);
  const base = path.join(g.dir, 'served');
  fs.mkdirSync(base);
  const bare = path.join(base, 'big.git');
  await generatedSource(g, bare, 300, 4096, 7);
  const pack = packBytes(bare);
  const daemon = await startGitDaemon(t, base);
  const proxy = await startProxy(t, daemon.port, { cutEvery: Math.floor(pack / 3) });
  const w = await startWharf(t, { env: { IMPORT_ALLOWED_HOSTS: 'loopback' }, workers: [(s) => createImportRunner(s, { pollMs: 100 })] });
  const created = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: `git://127.0.0.1:${proxy.port}/big.git`, target_org: 'demo', name: 'flaky' },
  });
  const job = await waitForJob(w, created.body.id, { timeoutMs: 240_000 });
  t.equal(job.status, 'succeeded', job.error);
  t.ok(proxy.cuts >= 1, `the link broke ${proxy.cuts} times`);
  const dir = repoDir(w.config.reposDir, 'demo', 'flaky');
  t.same(
    refList(await g.ok(['ls-remote', dir])),
    refList(await g.ok(['ls-remote', `git://127.0.0.1:${daemon.port}/big.git`])),
    'refs equal the source ls-remote',
  );
  t.equal((await g.ok(['rev-parse', '--is-shallow-repository'], { cwd: dir })).trim(), 'false', 'whole history');
  t.equal((await g.ok(['symbolic-ref', 'HEAD'], { cwd: dir })).trim(), 'refs/heads/trunk');
  t.ok(proxy.bytes <= 3 * pack, `${proxy.bytes} bytes through the link for a pack of ${pack} (at most three times)`);
});
