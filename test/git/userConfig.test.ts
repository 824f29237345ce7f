import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { commitDetails, listCommits } from '../../src/git/history.ts';
import { recentCommits } from '../../src/ui/gitRead.ts';
import { pullCommits } from '../../src/ui/pullGit.ts';

// Wharf's gits read the server user's ~/.gitconfig (an operator's settings for imports, say),
// so a display setting of theirs must not change what Wharf parses. log.showSignature is a
// common one among people who sign their commits: with it, git log prints the verification
// of every signed commit into its output, whatever the --format. The "gpg" here is a script
// that says what gpg would, so the test needs no keys.

t.test("history reads are not changed by the server user's log.showSignature", async (t) => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-userconfig-'));
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }));
  const fakeGpg = path.join(base, 'gpg');
  fs.writeFileSync(fakeGpg, '#!/bin/sh\necho "gpg: Signature made today" >&2\necho "[GNUPG:] GOODSIG 0 T <t@e>" >&2\nexit 0\n', { mode: 0o755 });
  const home = path.join(base, 'home');
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(home, '.gitconfig'), `[log]\n\tshowSignature = true\n[gpg]\n\tprogram = ${fakeGpg}\n`);
  const before = process.env.HOME;
  process.env.HOME = home;
  t.teardown(() => void (process.env.HOME = before));

  const dir = path.join(base, 'repo.git');
  const run = (args: string[], input?: string) =>
    execFileSync('git', args, { cwd: fs.existsSync(dir) ? dir : base, input, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home } }).trim();
  run(['init', '-q', '--bare', '-b', 'main', dir]);
  const tree = run(['hash-object', '-t', 'tree', '-w', '--stdin'], '');
  const root = run(
    ['hash-object', '-t', 'commit', '-w', '--stdin'],
    `tree ${tree}\nauthor Ada <ada@example.com> 1700000000 +0000\ncommitter Ada <ada@example.com> 1700000000 +0000\n\nroot\n`,
  );
  // A signed commit: its gpgsig header is what git hands to gpg.program to verify.
  const sig = ['-----BEGIN PGP SIGNATURE-----', '', 'iQEzBAABCAAdFiEE', '-----END PGP SIGNATURE-----'].join('\n ');
  const signed = run(
    ['hash-object', '-t', 'commit', '-w', '--stdin'],
    `tree ${tree}\nparent ${root}\nauthor Ada <ada@example.com> 1700000100 +0000\ncommitter Ada <ada@example.com> 1700000100 +0000\ngpgsig ${sig}\n\nsigned work\n\nthe body\n`,
  );
  run(['update-ref', 'refs/heads/main', signed]);
  t.match(run(['log', '--format=%H', 'main']), /gpg: Signature made today/, 'the setting is in force for a plain git log');

  const listed = await listCommits(dir, [signed], { count: 10 });
  t.same(
    listed.map((c) => [c.sha, c.author, c.subject]),
    [
      [signed, 'Ada', 'signed work'],
      [root, 'Ada', 'root'],
    ],
    'the history page lists both commits as they are',
  );
  const details = await commitDetails(dir, signed);
  t.equal(details.sha, signed);
  t.same(details.parents, [root]);
  t.equal(details.subject, 'signed work');
  t.equal(details.body, 'the body');
  t.same(
    (await recentCommits(dir, 'main')).map((c) => c.sha),
    [signed, root],
    "the repository page's recent commits",
  );
  t.same(
    (await pullCommits(dir, root, signed)).commits.map((c) => c.sha),
    [signed],
    "a pull request's commits",
  );
});

t.test("commit messages are read as UTF-8 whatever the server user's i18n.logOutputEncoding", async (t) => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-userconfig-'));
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }));
  const home = path.join(base, 'home');
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(home, '.gitconfig'), '[i18n]\n\tlogOutputEncoding = ISO-8859-1\n');
  const before = process.env.HOME;
  process.env.HOME = home;
  t.teardown(() => void (process.env.HOME = before));
  const dir = path.join(base, 'repo.git');
  const run = (args: string[], input?: string) =>
    execFileSync('git', args, { cwd: base, input, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home } }).trim();
  run(['init', '-q', '--bare', '-b', 'main', dir]);
  const tree = run(['--git-dir', dir, 'hash-object', '-t', 'tree', '-w', '--stdin'], '');
  const sha = run(
    ['--git-dir', dir, 'hash-object', '-t', 'commit', '-w', '--stdin'],
    `tree ${tree}\nauthor Zoë <z@example.com> 1700000000 +0000\ncommitter Zoë <z@example.com> 1700000000 +0000\n\nCafé\n`,
  );
  run(['--git-dir', dir, 'update-ref', 'refs/heads/main', sha]);
  t.same(
    (await listCommits(dir, [sha], { count: 1 })).map((c) => [c.author, c.subject]),
    [['Zoë', 'Café']],
  );
  const details = await commitDetails(dir, sha);
  t.same([details.author.name, details.subject], ['Zoë', 'Café']);
});
