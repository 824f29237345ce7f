import os from 'node:os';
import t from 'tap';
import { BACKGROUND_NICE, startGit } from '../../src/git/run.ts';

/** Starts a `cat-file --batch` that waits on its stdin, reads its priority, then ends it. */
async function priorityOf(background: boolean): Promise<number> {
  const { child, done } = startGit(['cat-file', '--batch'], { cwd: process.cwd(), input: 'open', background });
  try {
    return os.getPriority(child.pid!);
  } finally {
    child.stdin!.end();
    await done;
  }
}

t.test('background git runs at the lowest CPU priority; every other git at the server’s own', async (t) => {
  t.equal(await priorityOf(true), BACKGROUND_NICE, 'housekeeping yields the cores to requests and deliveries');
  t.equal(await priorityOf(false), os.getPriority(), 'a git serving a request is not slowed');
});
