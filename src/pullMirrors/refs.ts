import { git, gitBuffer } from '../git/run.ts';
import { isZero, type RefUpdate } from '../git/refUpdate.ts';

/**
 * Where a sync fetches the source's refs before it moves any visible ref: a namespace
 * inside the repository that `git http-backend` never advertises nor accepts
 * (`transfer.hideRefs` on its command line, src/transport/git/cgi.ts). The objects land in
 * the repository itself, so moving the visible refs afterwards is one `update-ref`
 * transaction; the staged refs stay between syncs (the next fetch only brings what is new)
 * and are removed at the cutover.
 */
export const STAGING = 'refs/wharf-mirror/';

/** Every ref of a repository (name → object), the staging namespace apart. */
export async function readRefs(dir: string): Promise<{ visible: Map<string, string>; staged: Map<string, string> }> {
  const out = await git(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: dir });
  const visible = new Map<string, string>();
  const staged = new Map<string, string>();
  for (const line of out.split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0) continue;
    const sha = line.slice(0, space);
    const ref = line.slice(space + 1);
    if (ref.startsWith(STAGING)) {
      // The fetch stages refs/<x> as STAGING<x>.
      const name = `refs/${ref.slice(STAGING.length)}`;
      // A source ref inside our own namespace would be staged twice over: never mirrored.
      if (!name.startsWith(STAGING)) staged.set(name, sha);
    } else visible.set(ref, sha);
  }
  return { visible, staged };
}

/** The all-zero id of the repository's object format (the length of `like`). */
export const zeroId = (like: string) => '0'.repeat(like.length);

/** The updates that make `visible` equal `staged`, in byte order of ref name. */
export function diffRefs(visible: Map<string, string>, staged: Map<string, string>): RefUpdate[] {
  const sample = [...visible.values(), ...staged.values()][0] ?? '0'.repeat(40);
  const zero = zeroId(sample);
  const names = [...new Set([...visible.keys(), ...staged.keys()])].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const updates: RefUpdate[] = [];
  for (const ref of names) {
    const before = visible.get(ref) ?? zero;
    const after = staged.get(ref) ?? zero;
    if (before !== after) updates.push({ before, after, ref });
  }
  return updates;
}

/**
 * Moves refs in ONE `git update-ref --stdin` transaction, every old value verified (a
 * ref that is not where `before` says fails the whole transaction, nothing moved).
 */
export async function moveRefs(dir: string, updates: RefUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  let input = 'start\n';
  for (const u of updates) {
    if (isZero(u.after)) input += `delete ${u.ref} ${u.before}\n`;
    else if (isZero(u.before)) input += `create ${u.ref} ${u.after}\n`;
    else input += `update ${u.ref} ${u.after} ${u.before}\n`;
  }
  input += 'prepare\ncommit\n';
  await gitBuffer(['update-ref', '--stdin'], input, { cwd: dir });
}

/** Removes the staging namespace (the cutover): the repository keeps no trace of its source. */
export async function dropStaging(dir: string): Promise<void> {
  const { staged } = await readRefs(dir);
  if (staged.size === 0) return;
  const input = [...staged.keys()].map((ref) => `delete ${STAGING}${ref.slice('refs/'.length)}\n`).join('');
  await gitBuffer(['update-ref', '--stdin'], input, { cwd: dir });
}

/** Lines of "old new ref", as push records and the mirror's `pending` column hold them. */
export const updateLines = (updates: RefUpdate[]) => updates.map((u) => `${u.before} ${u.after} ${u.ref}\n`).join('');
