import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startGit } from '../../src/git/run.ts';
import { tidyAfterPush } from '../../src/git/bare.ts';

/** The niceness of a running process, from /proc (field 19 of its stat line). */
function nicenessOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

t.test('a background git runs at the lowest CPU priority; any other at the normal one', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const own = os.getPriority();
  for (const [background, want] of [
    [true, 19],
    [false, own],
  ] as const) {
    // cat-file --batch waits on its open stdin: alive while its priority is read.
    const run = startGit(['cat-file', '--batch'], { input: 'open', background, cwd: os.tmpdir() });
    t.equal(nicenessOf(run.child.pid!), want, `background ${background}: niceness ${want}`);
    run.child.stdin!.end();
    await run.done;
  }
});

t.test('tidying a repository after a push (gc --auto, pack-refs) is background work', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-background-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  // A git first on PATH that writes down its own niceness, once the spawn has set it, then runs the real one.
  const real = execFileSync('sh', ['-c', 'command -v git']).toString().trim();
  const bin = path.join(root, 'bin');
  fs.mkdirSync(bin);
  const seen = path.join(root, 'niceness');
  fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\nsleep 0.3\nawk '{ print $19 }' /proc/$$/stat >> ${seen}\nexec ${real} "$@"\n`, { mode: 0o755 });
  const repo = path.join(root, 'repo.git');
  execFileSync(real, ['init', '-q', '--bare', repo]);
  const path0 = process.env.PATH;
  process.env.PATH = `${bin}:${path0}`;
  t.teardown(() => void (process.env.PATH = path0));
  await tidyAfterPush(repo, true);
  t.same(fs.readFileSync(seen, 'utf8').trim().split('\n'), ['19', '19'], 'gc --auto and pack-refs ran at niceness 19');
});
