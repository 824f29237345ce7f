import path from 'node:path';
import t from 'tap';
import { buildRepo } from '../helpers/wharf.ts';
import { gitClient, refList, repoUrl, type GitClient } from '../helpers/git.ts';
import { openBrowser, signIn, startUiWharf } from './browser.ts';
import { expectAccessible } from './audit.ts';

/** Splits one shell command line as sh would for the plain words and '…' quoting the page uses. */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

/** A source repository with three branches besides main and two tags (one annotated), as a bare repository on disk. */
async function sourceRepo(git: GitClient): Promise<string> {
  const work = path.join(git.dir, 'build');
  await git.ok(['init', '-q', work]);
  await git.commit(work, 'first');
  await git.ok(['tag', 'v1.0'], { cwd: work });
  for (const branch of ['feature/login', 'release-2', 'docs']) {
    await git.ok(['checkout', '-q', '-b', branch, 'main'], { cwd: work });
    await git.commit(work, `work on ${branch}`);
  }
  await git.ok(['tag', '-a', 'v2.0', '-m', 'two'], { cwd: work });
  await git.ok(['checkout', '-q', 'main'], { cwd: work });
  await git.commit(work, 'second on main');
  const bare = path.join(git.dir, 'source.git');
  await git.ok(['clone', '-q', '--bare', work, bare]);
  return bare;
}

/** Runs the commands of a <pre> as a user pastes them, in `cwd`, with the token as the URL's password. */
async function runAdvice(git: GitClient, text: string, cloneUrl: string, authedUrl: string, cwd: string) {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  for (const line of lines) {
    const [program, ...args] = words(line);
    if (program !== 'git') throw new Error(`not a git command: ${line}`);
    await git.ok(
      args.map((a) => (a === cloneUrl ? authedUrl : a)),
      { cwd },
    );
  }
  return lines;
}

t.test("the empty repository's advice pushes every branch and tag of a working clone, and of a mirror clone", async (t) => {
  const w = await startUiWharf(t);
  await buildRepo(w, 'demo', 'moved');
  await buildRepo(w, 'demo', 'mirrored');
  const git = gitClient(t);
  const source = await sourceRepo(git);
  const sourceRefs = refList(await git.ok(['ls-remote', source]));
  t.equal(sourceRefs.filter((r) => r.includes('refs/heads/')).length, 4, 'the source has four branches');

  // An ordinary working clone: main checked out, the other branches only as refs/remotes/origin/*, and a branch of one's own.
  const work = path.join(git.dir, 'work');
  await git.ok(['clone', '-q', source, work]);
  await git.ok(['checkout', '-q', '-b', 'mine'], { cwd: work });
  await git.commit(work, 'local work');
  await git.ok(['checkout', '-q', 'main'], { cwd: work });
  const mine = (await git.ok(['rev-parse', 'refs/heads/mine'], { cwd: work })).trim();

  const { page } = await openBrowser(t);
  await signIn(page, w);
  await page.goto(`${w.url}/demo/moved`);
  const cloneUrl = `${w.url}/demo/moved.git`;
  const advice = (await page.textContent('.push-help #push-working'))!;
  const ran = await runAdvice(git, advice, cloneUrl, repoUrl(w, 'demo/moved', w.adminToken), work);
  t.ok(
    ran.some((l) => l.includes(cloneUrl)),
    'the advice names the clone URL',
  );
  await w.pushesRecorded();
  const arrived = refList(await git.ok(['ls-remote', repoUrl(w, 'demo/moved', w.adminToken)]));
  for (const ref of sourceRefs) t.ok(arrived.includes(ref), `${ref.split(' ')[1]} arrived at the source's commit`);
  t.ok(arrived.includes(`${mine} refs/heads/mine`), "the clone's own branch arrived");
  t.same(
    arrived.filter((r) => !sourceRefs.includes(r) && r !== `${mine} refs/heads/mine`),
    [],
    'nothing else: no refs/remotes/*, no branch named HEAD',
  );
  await expectAccessible(t, page, 'empty-repository');

  // A bare mirror clone: --mirror is right for it.
  const mirror = path.join(git.dir, 'mirror.git');
  await git.ok(['clone', '-q', '--mirror', source, mirror]);
  await page.goto(`${w.url}/demo/mirrored`);
  const mirrorAdvice = (await page.textContent('.push-help #push-mirror'))!;
  await runAdvice(git, mirrorAdvice, `${w.url}/demo/mirrored.git`, repoUrl(w, 'demo/mirrored', w.adminToken), mirror);
  await w.pushesRecorded();
  t.same(refList(await git.ok(['ls-remote', repoUrl(w, 'demo/mirrored', w.adminToken)])), sourceRefs, 'a mirror clone arrives whole');
});
