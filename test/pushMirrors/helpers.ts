import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { gitClient, type GitClient } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import type { TestWharf } from '../helpers/wharf.ts';

/** A git client with git-lfs's filters in its own HOME's config. */
export async function lfsClient(t: Test): Promise<GitClient> {
  const g = gitClient(t);
  await g.ok(['lfs', 'install', '--skip-repo']);
  if (!/filter "lfs"/.test(fs.readFileSync(path.join(g.home, '.gitconfig'), 'utf8'))) throw new Error('git lfs install wrote no filter');
  return g;
}

/** A push mirror row as the database holds it. */
export async function mirrorRow(w: TestWharf, id: number): Promise<any> {
  return w.running.services.db('push_mirrors').where('id', id).first();
}

/**
 * Waits until a push mirror is settled after `since`: no sync runs, none is due (the last
 * one finished was claimed after every push so far was recorded), and the last started at
 * or after `since`. Call after the pushes are recorded (`pushesRecorded`).
 */
export async function mirrorSettled(w: TestWharf, id: number, since: number): Promise<any> {
  let last: any;
  await waitFor(
    async () => {
      last = await mirrorRow(w, id);
      return last && last.locked_by === null && Number(last.next_sync_at) > Date.now() && Number(last.last_sync_at ?? 0) >= since;
    },
    { timeoutMs: 60_000, intervalMs: 50, what: `push mirror ${id} synced` },
  ).catch((err) => {
    throw new Error(`${err.message.split(';')[0]}; last row: ${JSON.stringify({ ...last, credentials: undefined })}`);
  });
  return last;
}
