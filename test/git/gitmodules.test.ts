import t from 'tap';
import type { Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { buildRepo, buildUser, startWharf } from '../helpers/wharf.ts';
import { gitClient, refList, repoUrl, type GitClient } from '../helpers/git.ts';
import { gitmodulesProblem, submoduleUrlProblem } from '../../src/git/gitmodules.ts';
import { countCommits } from '../../src/import/copy.ts';

const EXT = 'ext::sh -c touch% /tmp/pwned';
const gitmodules = (name: string, url: string) => `[submodule "${name}"]\n\tpath = ${name}\n\turl = ${url}\n`;

/** A server with an owner's repository demo/app, a git client, its token URL and an empty working clone on main. */
async function pushSetup(t: Parameters<typeof startWharf>[0]) {
  const w = await startWharf(t);
  const g = gitClient(t);
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });
  await buildRepo(w, 'demo', 'app');
  const url = repoUrl(w, 'demo/app', token);
  const work = path.join(g.dir, 'work');
  await g.ok(['init', '-q', '-b', 'main', work]);
  return { w, g, url, work };
}

/** pushSetup, with a first commit pushed to main: `before` is the refs then. */
async function firstPushed(t: Parameters<typeof startWharf>[0]) {
  const setup = await pushSetup(t);
  await setup.g.commit(setup.work, 'first', { 'README.md': 'hi\n' });
  await setup.g.ok(['push', '-q', setup.url, 'main'], { cwd: setup.work });
  return { ...setup, before: refList(await setup.g.ok(['ls-remote', setup.url])) };
}

/** Pushes `work`'s main to `url` and checks that it is refused, saying `reason`, with the refs still `before`; returns git's output. */
async function refusedPush(t: Test, g: GitClient, url: string, work: string, reason: RegExp, before: string[]) {
  const pushed = await g.run(['push', url, 'main'], { cwd: work });
  t.not(pushed.code, 0, 'the push fails');
  t.match(pushed.stderr, reason);
  t.same(refList(await g.ok(['ls-remote', url])), before, 'refs unchanged');
  return pushed;
}

t.test('submodule URLs: remote-helper transports and options are refused, plain URLs and paths pass', async (t) => {
  for (const url of [EXT, 'fd::17', 'FD::0,1', 'ext::git-upload-pack %s', 'foo+bar::x', '::x', '-u', '--upload-pack=touch /tmp/x', ' --config=x']) {
    t.ok(submoduleUrlProblem(url), `refused: ${url}`);
  }
  t.match(submoduleUrlProblem(EXT), /"ext::" remote-helper transport/);
  t.match(submoduleUrlProblem('--upload-pack=x'), /command-line option/);
  for (const url of [
    'https://example.com/lib.git',
    'http://h/x',
    'git://h/x',
    'ssh://h/x',
    'git@github.com:a/b.git',
    '../other.git',
    './sub',
    '/srv/git/x.git',
    'file:///srv/x',
    'C:\\repo',
    'a-b',
  ]) {
    t.equal(submoduleUrlProblem(url), null, `accepted: ${url}`);
  }
});

t.test('a push is refused, refs unchanged, when a new commit names a .gitmodules url that runs a command', async (t) => {
  const { g, url, work } = await pushSetup(t);
  const first = await g.commit(work, 'first', { 'README.md': 'hi\n' });
  await g.ok(['push', '-q', url, 'main'], { cwd: work });
  const before = refList(await g.ok(['ls-remote', url]));
  t.same(before, [`${first} refs/heads/main`]);

  // The bad .gitmodules, then a commit on top that leaves it as it is: both are new, the push is refused.
  await g.commit(work, 'submodule through ext::', { '.gitmodules': gitmodules('x', EXT) });
  await g.commit(work, 'later work');
  const pushed = await g.run(['push', url, 'main'], { cwd: work });
  t.not(pushed.code, 0, 'the push fails');
  t.match(
    pushed.stderr,
    /remote: error: refused by Wharf's integrity checks \(fsck\): gitmodulesUrl: \.gitmodules blob [0-9a-f]{40}: submodule "x" url "ext::sh -c touch% \/tmp\/pwned": it uses the "ext::" remote-helper transport/,
  );
  t.match(pushed.stderr, /pre-receive hook declined/);
  t.same(refList(await g.ok(['ls-remote', url])), before, 'refs unchanged');

  // A new branch pointing at the same history is refused as well.
  const branch = await g.run(['push', url, 'main:refs/heads/other'], { cwd: work });
  t.not(branch.code, 0);
  t.same(refList(await g.ok(['ls-remote', url])), before, 'refs unchanged');
});

t.test(
  'a top-level .gitmodules that reuses a blob the repository already has, in another case, is checked too; one in a folder is an ordinary file',
  async (t) => {
    const { g, url, work } = await pushSetup(t);
    // The same bytes as an ordinary file are fine, and are now in the repository.
    await g.commit(work, 'notes', { 'notes.txt': gitmodules('y', 'fd::17') });
    await g.ok(['push', '-q', url, 'main'], { cwd: work });
    const before = refList(await g.ok(['ls-remote', url]));

    // git reads submodules from the top-level .gitmodules alone: in a folder it is a file like any other.
    await g.commit(work, 'the same blob in a folder', { 'vendor/.gitmodules': gitmodules('y', 'fd::17') });
    await g.ok(['push', '-q', url, 'main'], { cwd: work });
    const nested = refList(await g.ok(['ls-remote', url]));
    t.notSame(nested, before, 'a .gitmodules in a folder is taken');

    // At the top, in any case, it is the .gitmodules: each refused commit is undone before the next.
    for (const name of ['.gitModules', '.GITMODULES']) {
      await g.commit(work, 'the same blob as the .gitmodules', { [name]: gitmodules('y', 'fd::17') });
      await refusedPush(t, g, url, work, /submodule "y" url "fd::17": it uses the "fd::" remote-helper transport/, nested);
      await g.ok(['reset', '-q', '--hard', 'HEAD~1'], { cwd: work });
    }
  },
);

t.test('a merge is refused when a side branch added a .gitmodules url that runs a command and removed it again', async (t) => {
  const { g, url, work, before } = await firstPushed(t);

  // The merge's tree has no .gitmodules and matches main's: only the side branch's own commits name the blob.
  await g.ok(['checkout', '-q', '-b', 'side'], { cwd: work });
  await g.commit(work, 'submodule through ext::', { '.gitmodules': gitmodules('x', EXT) });
  await g.ok(['rm', '-q', '.gitmodules'], { cwd: work });
  await g.ok(['commit', '-q', '-m', 'gone again'], { cwd: work });
  await g.ok(['checkout', '-q', 'main'], { cwd: work });
  await g.commit(work, 'main work');
  await g.ok(['merge', '-q', '--no-edit', 'side'], { cwd: work });
  await refusedPush(t, g, url, work, /submodule "x" url "ext::sh -c touch% \/tmp\/pwned": it uses the "ext::" remote-helper transport/, before);
});

/**
 * Runs the server's git, for the rest of test `t`, with `gitconfig` as its user's global
 * config (HOME is where every git Wharf starts reads it from).
 */
function serverGitConfig(t: Parameters<typeof startWharf>[0], gitconfig: string): void {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-home-'));
  fs.writeFileSync(path.join(home, '.gitconfig'), gitconfig);
  const before = process.env.HOME;
  process.env.HOME = home;
  t.teardown(() => {
    process.env.HOME = before;
    fs.rmSync(home, { recursive: true, force: true });
  });
}

t.test("the push check is not steered by the server's git config: with log.follow set, a .gitmodules url that runs a command is still refused", async (t) => {
  const { g, url, work } = await firstPushed(t);
  // A common dotfile setting: git log follows a single path's renames, which git cannot do for a path of any case (it dies).
  serverGitConfig(t, '[log]\n\tfollow = true\n');
  await g.commit(work, 'plain work', { 'notes.txt': 'x\n' });
  await g.ok(['push', '-q', url, 'main'], { cwd: work }); // an ordinary push still goes through
  const before = refList(await g.ok(['ls-remote', url]));
  await g.commit(work, 'submodule through ext::', { '.gitmodules': gitmodules('x', EXT) });
  await refusedPush(t, g, url, work, /submodule "x" url "ext::sh -c touch% \/tmp\/pwned": it uses the "ext::" remote-helper transport/, before);
});

t.test('a push whose .gitmodules check cannot run is refused, not let through unchecked', async (t) => {
  const { g, url, work, before } = await firstPushed(t);
  // A date format git does not know: every git log on the server dies reading its config.
  serverGitConfig(t, '[log]\n\tdate = no-such-format\n');
  await g.commit(work, 'submodule through ext::', { '.gitmodules': gitmodules('x', EXT) });
  const pushed = await refusedPush(t, g, url, work, /remote: Wharf could not check the pushed commits' \.gitmodules/, before);
  t.match(pushed.stderr, /pre-receive hook declined/);
});

t.test('submodules with https and relative URLs push as before; so do later pushes, merges and deletions', async (t) => {
  const { g, url, work } = await pushSetup(t);
  await g.commit(work, 'submodules', { '.gitmodules': gitmodules('lib', 'https://example.com/lib.git') + gitmodules('other', '../other.git') });
  await g.ok(['update-index', '--add', '--cacheinfo', `160000,${'a'.repeat(40)},lib`], { cwd: work });
  await g.ok(['update-index', '--add', '--cacheinfo', `160000,${'b'.repeat(40)},other`], { cwd: work });
  await g.ok(['commit', '-q', '-m', 'gitlinks'], { cwd: work });
  await g.ok(['push', '-q', url, 'main'], { cwd: work });
  await g.ok(['checkout', '-q', '-b', 'topic'], { cwd: work });
  await g.commit(work, 'topic work');
  await g.ok(['checkout', '-q', 'main'], { cwd: work });
  await g.commit(work, 'main work');
  await g.ok(['merge', '-q', '--no-edit', 'topic'], { cwd: work });
  await g.ok(['push', '-q', url, 'main', 'topic'], { cwd: work });
  const local = (await g.ok(['rev-parse', 'main', 'topic'], { cwd: work })).trim().split('\n');
  t.same(refList(await g.ok(['ls-remote', url])), [`${local[0]} refs/heads/main`, `${local[1]} refs/heads/topic`].sort(), 'both branches, as pushed');
  await g.ok(['push', '-q', url, ':topic'], { cwd: work });
  t.same(refList(await g.ok(['ls-remote', url])), [`${local[0]} refs/heads/main`], 'the deletion went through');
});

t.test("the import check of a copy whose history git cannot read fails with git's error, after 20,000 commits streamed", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-gitmodules-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (args: string[], input?: string) => execFileSync('git', args, { cwd: dir, input, encoding: 'utf8' }).trim();
  run(['init', '-q', '--bare', '.']);
  // 20,000 commits: far more output than a pipe holds before the walk reaches the broken one.
  const lines: string[] = [];
  for (let i = 1; i <= 20_000; i++)
    lines.push('commit refs/heads/main', `committer A <a@example.com> ${1_700_000_000 + i} +0000`, 'data 2', 'c', `M 644 inline f`, 'data 2', `${i % 10}`);
  run(['fast-import', '--quiet'], lines.join('\n') + '\n');
  // A tip whose tree is missing: the walk lists it and dies diffing it.
  const parent = run(['rev-parse', 'main']);
  const broken = run(
    ['hash-object', '-t', 'commit', '-w', '--literally', '--stdin'],
    `tree ${'1'.repeat(40)}\nparent ${parent}\nauthor A <a@example.com> 1 +0000\ncommitter A <a@example.com> 1 +0000\n\nbroken\n`,
  );
  run(['update-ref', 'refs/heads/broken', broken]);
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    gitmodulesProblem(dir).then(
      () => 'answered',
      (err: Error) => `failed: ${err.message}`,
    ),
    new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting after 20 s'), 20_000))),
  ]);
  clearTimeout(timer);
  t.match(outcome, /^failed: git log failed: .*1{40}/);
});

t.test('the import scan finds the blobs of merges whose .gitmodules differs from each parent, and the import counts every commit once', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-gitmodules-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (args: string[]) => execFileSync('git', ['-c', 'user.name=A', '-c', 'user.email=a@example.com', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  const commit = (message: string, files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    run(['add', '-A']);
    run(['commit', '-q', '-m', message]);
  };
  run(['init', '-q', '-b', 'main', '.']);
  commit('root', { 'README.md': 'hi\n' });
  run(['checkout', '-q', '-b', 'side']);
  commit('side submodule', { '.gitmodules': gitmodules('a', 'https://example.com/a.git') });
  run(['checkout', '-q', 'main']);
  commit('main submodule', { '.gitmodules': gitmodules('b', 'https://example.com/b.git') });
  // The merge's .gitmodules is neither parent's: git log lists it once against each.
  run(['merge', '-q', '--no-commit', '-s', 'ours', 'side']);
  fs.writeFileSync(path.join(dir, '.gitmodules'), gitmodules('a', 'https://example.com/a.git') + gitmodules('b', 'fd::3'));
  run(['add', '.gitmodules']);
  run(['commit', '-q', '--no-edit']);
  commit('later', { 'later.txt': 'x\n' });
  t.match(await gitmodulesProblem(dir), /submodule "b" url "fd::3": it uses the "fd::" remote-helper transport/, "the merge's own .gitmodules is read");
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-gitmodules-'));
  t.teardown(() => fs.rmSync(empty, { recursive: true, force: true }));
  execFileSync('git', ['init', '-q', '--bare', empty]);
  t.equal(await gitmodulesProblem(empty), null, 'an empty copy: nothing to read');
  t.equal(await countCommits(empty), 0, 'and no commits counted');
  t.equal(await countCommits(dir), 5, 'every commit the refs reach, merges once');
});
