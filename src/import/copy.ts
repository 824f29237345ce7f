import fs from 'node:fs/promises';
import path from 'node:path';
import { git } from '../git/run.ts';
import { gitmodulesProblem } from '../git/gitmodules.ts';
import type { HostPolicy } from '../net/hostPolicy.ts';
import { parseGitProgress, type Progress } from '../remote/progress.ts';
import { GitRunError, remoteGit } from '../remote/gitRemote.ts';
import { pinSource, type Credentials } from '../remote/url.ts';

/** What a copy needs: where, from where, how. */
export interface CopyOptions {
  /** The temporary bare repository (created when missing, reused when resuming). */
  dir: string;
  url: URL;
  policy: HostPolicy;
  credentials: Credentials | null;
  askpass: string;
  signal: AbortSignal;
  /** A git run without progress for this long fails (ms; see remoteGit). */
  stallMs: number;
  strategy: 'full' | 'incremental';
  /** Commits added per deepening step of the incremental strategy. */
  deepenStep: number;
  /** Deepening steps before the rest is fetched in one go. */
  maxSteps: number;
  onProgress: (progress: Progress) => void;
}

const ALL_REFS = '+refs/*:refs/*';
const FETCH = ['fetch', '--progress', '--no-write-fetch-head', '--no-recurse-submodules'];

/** SPEC §7.6: the .gitmodules a push would be refused for (gitmodules.ts) fail the import too. */
export async function checkGitmodules(dir: string): Promise<void> {
  const problem = await gitmodulesProblem(dir);
  if (problem)
    throw new GitRunError({
      kind: 'fsck_failed',
      message: `the source's objects fail Wharf's integrity checks (fsck, as for a push): ${problem}`,
      broken: false,
    });
}

/** How many commits the copy's refs reach (`repository.commits` of the import's result). */
export async function countCommits(dir: string): Promise<number> {
  return Number((await git(['rev-list', '--count', '--all'], { cwd: dir })).trim());
}

/**
 * Copies every ref of the source into `dir`. The incremental strategy (shallow, deepen in
 * steps, then the rest) keeps each step's pack, so a broken connection or a restart loses
 * at most the step in flight. Returns the source's default branch as it advertised it
 * (null for a detached or empty source); settleCopy points HEAD at it. The copy is not yet
 * checked: checkGitmodules must pass before it becomes a repository.
 */
export async function copyRepository(options: CopyOptions): Promise<{ head: string | null }> {
  if (options.strategy === 'full') {
    // One clone: it writes HEAD from the source's advertised default branch in the same connection.
    await fs.rm(options.dir, { recursive: true, force: true });
    await fs.mkdir(path.dirname(options.dir), { recursive: true });
    // Without git's own fsync of the pack, which would wait for it after the deltas are
    // resolved (30-50 ms of a 450 ms clone): its bytes are written out while git resolves
    // them, and syncObjects makes the rest durable beside the checks, before the copy is
    // marked or moved in.
    let received: Promise<void> | null = null;
    const onProgress = (progress: Progress) => {
      if (!received && (progress.phase === 'resolving_deltas' || (progress.phase === 'receiving_objects' && progress.percent === 100)))
        received = syncReceivedPack(options.dir);
      options.onProgress(progress);
    };
    const args = ['-c', 'core.fsync=none', 'clone', '--mirror', '--progress', '--template=', '--no-recurse-submodules'];
    try {
      await fromSource({ ...options, onProgress }, args, [options.dir]);
    } finally {
      await received;
    }
    return { head: /^ref: refs\/heads\/(\S+)/.exec(await fs.readFile(path.join(options.dir, 'HEAD'), 'utf8'))?.[1] ?? null };
  }
  await ensureBare(options.dir);
  const { head, branches } = await sourceRefs(options);
  const main = head && branches.includes(head) ? head : (['main', 'master'].find((b) => branches.includes(b)) ?? branches[0] ?? null);
  if (main) await deepenBranch(options, main);
  // The other refs: tags and branches of the history already here cost little.
  const rest = (await isShallow(options.dir)) ? ['--unshallow'] : [];
  await withRetries(() => fetchFromSource(options, [...FETCH, '--prune', ...rest], [ALL_REFS]));
  return { head };
}

/**
 * Writes a full copy's objects to disk for good: its packs and their indexes (what git's
 * clone syncs with its default `core.fsync`), and its packed refs and the folders holding
 * them too. I/O waits alone, so it runs beside the checks' CPU work.
 */
export async function syncObjects(dir: string): Promise<void> {
  const packDir = path.join(dir, 'objects', 'pack');
  const packs = (await fs.readdir(packDir).catch(() => [] as string[])).map((name) => path.join(packDir, name));
  await Promise.all([...packs, path.join(dir, 'packed-refs')].map(syncPath));
  await Promise.all([packDir, path.join(dir, 'objects')].map(syncPath));
}

/** The same for what settleCopy rewrites (HEAD, config) and the copy's own folder. */
export async function syncSettings(dir: string): Promise<void> {
  await Promise.all(['HEAD', 'config'].map((name) => syncPath(path.join(dir, name))));
  await syncPath(dir);
}

/**
 * Writes out the pack a clone is still indexing (`objects/pack/tmp_pack_*`, complete once
 * every object has been received): the same file is renamed into place, so syncObjects
 * finds it written. A pack gone meanwhile (renamed, or the clone failed) is left to that.
 */
async function syncReceivedPack(dir: string): Promise<void> {
  const packDir = path.join(dir, 'objects', 'pack');
  const names = await fs.readdir(packDir).catch(() => [] as string[]);
  await Promise.all(names.filter((name) => name.startsWith('tmp_pack_')).map((name) => syncPath(path.join(packDir, name)).catch(() => {})));
}

/** fsync of one file or folder; one that is not there (no packed-refs in an empty copy) has nothing to write. */
async function syncPath(file: string): Promise<void> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The copy's branches and how many tags it has, from one `for-each-ref`. */
export interface CopyRefs {
  branches: string[];
  tags: number;
}

/** Reads a copy's branches and counts its tags. */
export async function copyRefs(dir: string): Promise<CopyRefs> {
  const refs = (await git(['for-each-ref', '--format=%(refname)', 'refs/heads', 'refs/tags'], { cwd: dir })).split('\n').filter(Boolean);
  return {
    branches: refs.filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice('refs/heads/'.length)),
    tags: refs.filter((r) => r.startsWith('refs/tags/')).length,
  };
}

/**
 * Makes a finished copy a repository of its own: the clone's record of where it came from
 * (the pinned address, the remote's refspec) goes, and HEAD points at the source's
 * default branch (`head`), else main, master or the first branch. Returns that branch.
 * Both are files of their own that git replaces whole (a lock file renamed into place),
 * so this runs beside the read-only checks of the copy.
 */
export async function settleCopy(dir: string, head: string | null, refs: CopyRefs): Promise<string> {
  const cloned = /^\[remote "origin"\]$/m.test(await fs.readFile(path.join(dir, 'config'), 'utf8'));
  const [, branch] = await Promise.all([cloned ? git(['config', '--remove-section', 'remote.origin'], { cwd: dir }) : null, setHead(dir, head, refs.branches)]);
  return branch;
}

/** Bytes a step of the incremental copy aims at before anything is known of the link. */
const FIRST_STEP_BYTES = 32 * 1024 * 1024;
const MIN_STEP_BYTES = 64 * 1024;
/** Broken steps in a row (each one smaller) before the attempt is given up. */
const MAX_BREAKS = 8;

/**
 * Brings the default branch alone: its tip (`--depth=1`), then its history in steps of
 * at most `deepenStep` commits sized to move about FIRST_STEP_BYTES each, from what
 * earlier steps cost per commit. A step the link breaks is tried again at half the bytes
 * that arrived before the break, so a link that breaks every few MB still moves the
 * history in pieces it lets through. Every finished step stays, so a restart resumes.
 */
async function deepenBranch(options: CopyOptions, branch: string): Promise<void> {
  const refspec = `+refs/heads/${branch}:refs/heads/${branch}`;
  if (!(await hasRef(options.dir, `refs/heads/${branch}`))) {
    await withRetries(() => fetchFromSource(options, [...FETCH, '--depth=1'], [refspec]));
  }
  let targetBytes = FIRST_STEP_BYTES;
  // Until a step has been measured, the tip's own size stands for a commit's: too much for
  // most histories, so the first steps err small and the measured figure takes over.
  let bytesPerCommit = Math.max(1, (await copySize(options.dir)).bytes_received);
  let breaks = 0;
  for (let step = 0; step < options.maxSteps && (await isShallow(options.dir));) {
    const commits = Math.max(1, Math.min(options.deepenStep, Math.floor(targetBytes / bytesPerCommit)));
    const before = (await copySize(options.dir)).bytes_received;
    const meter = { bytes: 0 };
    try {
      await fetchFromSource(options, [...FETCH, `--deepen=${commits}`], [refspec], meter);
    } catch (err) {
      if (!(err instanceof GitRunError && err.failure.broken) || ++breaks > MAX_BREAKS) throw err;
      // Aim at half of what the link let through this time; without a figure, at a quarter of this step.
      const tried = Math.min(targetBytes, commits * bytesPerCommit);
      targetBytes = Math.max(MIN_STEP_BYTES, meter.bytes > 0 ? Math.floor(Math.min(meter.bytes, tried) / 2) : Math.floor(tried / 4));
      await new Promise((r) => setTimeout(r, 200 * breaks));
      continue;
    }
    breaks = 0;
    step++;
    const moved = (await copySize(options.dir)).bytes_received - before;
    if (moved > 0) bytesPerCommit = Math.max(1, Math.ceil(moved / commits));
  }
}

/** Each run pins the freshly checked address: the policy holds on every connection. */
async function fromSource(options: CopyOptions, args: string[], after: string[], meter?: { bytes: number }): Promise<void> {
  const pin = await pinSource(options.policy, options.url);
  let last: Progress | null = null;
  await remoteGit([...args, '--', pin.url, ...after], {
    cwd: options.strategy === 'full' ? undefined : options.dir,
    pin: pin.config,
    credentials: options.credentials,
    askpass: options.askpass,
    signal: options.signal,
    stallMs: options.stallMs,
    onStderr(text) {
      const next = parseGitProgress(text, last);
      if (next) options.onProgress((last = next));
      if (meter && next?.bytes_received) meter.bytes = next.bytes_received;
    },
  });
}

function fetchFromSource(options: CopyOptions, args: string[], refspecs: string[], meter?: { bytes: number }): Promise<void> {
  return fromSource(options, args, refspecs, meter);
}

/** Retries a step whose connection broke off; other failures end the attempt. */
async function withRetries(step: () => Promise<void>, tries = 3): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      return await step();
    } catch (err) {
      if (!(err instanceof GitRunError && err.failure.broken) || i >= tries) throw err;
      await new Promise((r) => setTimeout(r, 500 * i));
    }
  }
}

/** The source's branches and the one its HEAD names (`ls-remote --symref`; null for a detached or empty source). */
async function sourceRefs(options: CopyOptions): Promise<{ head: string | null; branches: string[] }> {
  const pin = await pinSource(options.policy, options.url);
  const out = await remoteGit(['ls-remote', '--symref', '--', pin.url], {
    pin: pin.config,
    credentials: options.credentials,
    askpass: options.askpass,
    signal: options.signal,
    stallMs: options.stallMs,
  });
  const head = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out)?.[1] ?? null;
  const branches = [...out.matchAll(/^[0-9a-f]{40,64}\trefs\/heads\/(\S+)$/gm)].map((m) => m[1]);
  return { head, branches };
}

async function ensureBare(dir: string): Promise<void> {
  try {
    await fs.access(path.join(dir, 'HEAD'));
  } catch {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(path.dirname(dir), { recursive: true });
    await git(['init', '--quiet', '--bare', dir]);
  }
}

async function hasRef(dir: string, ref: string): Promise<boolean> {
  return (await git(['for-each-ref', '--count=1', '--format=%(refname)', ref], { cwd: dir })).trim() !== '';
}

async function isShallow(dir: string): Promise<boolean> {
  return (await git(['rev-parse', '--is-shallow-repository'], { cwd: dir })).trim() === 'true';
}

/** Points HEAD at the source's default branch; without one, at main, master or the first branch. */
async function setHead(dir: string, wanted: string | null, branches: string[]): Promise<string> {
  if (wanted && branches.includes(wanted)) {
    // Already what the clone wrote, or what a fetch was told: one spawn fewer on the common path.
    const current = await fs.readFile(path.join(dir, 'HEAD'), 'utf8');
    if (current.trim() === `ref: refs/heads/${wanted}`) return wanted;
  }
  const branch =
    (wanted && branches.includes(wanted) ? wanted : null) ?? ['main', 'master'].find((b) => branches.includes(b)) ?? branches[0] ?? wanted ?? 'main';
  await git(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { cwd: dir });
  return branch;
}

/** Objects and bytes of a copy (`git count-objects -v`: loose and packed objects, their size on disk). */
export async function copySize(dir: string): Promise<{ objects_received: number; bytes_received: number }> {
  const out = await git(['count-objects', '-v'], { cwd: dir });
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(out)?.[1] ?? 0);
  return { objects_received: field('count') + field('in-pack'), bytes_received: (field('size') + field('size-pack')) * 1024 };
}
