import fs from 'node:fs/promises';
import path from 'node:path';
import { git } from '../git/run.ts';
import type { HostPolicy } from '../net/hostPolicy.ts';
import { parseGitProgress, type Progress } from './progress.ts';
import { GitRunError, remoteGit } from './gitRemote.ts';
import { pinSource, type Credentials } from './url.ts';

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

/**
 * Copies every ref of the source into `dir` and points HEAD at the source's default
 * branch. The incremental strategy (shallow, deepen in steps, then the rest) keeps each
 * step's pack, so a broken connection or a restart loses at most the step in flight.
 */
export async function copyRepository(options: CopyOptions): Promise<{ defaultBranch: string }> {
  if (options.strategy === 'full') {
    // One clone: it sets HEAD from the source's advertised default branch in the same connection.
    await fs.rm(options.dir, { recursive: true, force: true });
    await fs.mkdir(path.dirname(options.dir), { recursive: true });
    await fromSource(options, ['clone', '--mirror', '--progress', '--template=', '--no-recurse-submodules'], [options.dir]);
    // The copy keeps no trace of where it came from (the pinned address, the remote's refspec).
    await git(['config', '--remove-section', 'remote.origin'], { cwd: options.dir });
    const head = /^ref: refs\/heads\/(\S+)/.exec(await fs.readFile(path.join(options.dir, 'HEAD'), 'utf8'))?.[1] ?? null;
    return { defaultBranch: await setHead(options.dir, head) };
  }
  await ensureBare(options.dir);
  const remoteHead = await sourceHead(options);
  if (!(await hasRefs(options.dir))) await withRetries(() => fetchFromSource(options, [...FETCH, '--depth=1']));
  for (let step = 0; step < options.maxSteps && (await isShallow(options.dir)); step++) {
    await withRetries(() => fetchFromSource(options, [...FETCH, `--deepen=${options.deepenStep}`]));
  }
  const rest = (await isShallow(options.dir)) ? ['--unshallow'] : [];
  await withRetries(() => fetchFromSource(options, [...FETCH, '--prune', ...rest]));
  return { defaultBranch: await setHead(options.dir, remoteHead) };
}

/** Each run pins the freshly checked address: the policy holds on every connection. */
async function fromSource(options: CopyOptions, args: string[], after: string[]): Promise<void> {
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
    },
  });
}

function fetchFromSource(options: CopyOptions, args: string[]): Promise<void> {
  return fromSource(options, args, [ALL_REFS]);
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

/** The branch the source's HEAD names (`ls-remote --symref`), or null for a detached or empty source. */
async function sourceHead(options: CopyOptions): Promise<string | null> {
  const pin = await pinSource(options.policy, options.url);
  const out = await remoteGit(['ls-remote', '--symref', '--', pin.url, 'HEAD'], {
    pin: pin.config,
    credentials: options.credentials,
    askpass: options.askpass,
    signal: options.signal,
    stallMs: options.stallMs,
  });
  const m = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out);
  return m ? m[1] : null;
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

async function hasRefs(dir: string): Promise<boolean> {
  return (await git(['for-each-ref', '--count=1', '--format=%(refname)'], { cwd: dir })).trim() !== '';
}

async function isShallow(dir: string): Promise<boolean> {
  return (await git(['rev-parse', '--is-shallow-repository'], { cwd: dir })).trim() === 'true';
}

/** Points HEAD at the source's default branch; without one, at main, master or the first branch. */
async function setHead(dir: string, wanted: string | null): Promise<string> {
  const branches = (await git(['for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads'], { cwd: dir })).split('\n').filter(Boolean);
  if (wanted && branches.includes(wanted)) {
    // Already what the clone wrote, or what a fetch was told: one spawn fewer on the common path.
    const current = await fs.readFile(path.join(dir, 'HEAD'), 'utf8');
    if (current.trim() === `ref: refs/heads/${wanted}`) return wanted;
  }
  const branch = (wanted && branches.includes(wanted) ? wanted : null) ?? ['main', 'master'].find((b) => branches.includes(b)) ?? branches[0] ?? wanted ?? 'main';
  await git(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { cwd: dir });
  return branch;
}

/** Counts branches and tags of a repository. */
export async function countRefs(dir: string): Promise<{ branches: number; tags: number }> {
  const refs = (await git(['for-each-ref', '--format=%(refname)', 'refs/heads', 'refs/tags'], { cwd: dir })).split('\n').filter(Boolean);
  return { branches: refs.filter((r) => r.startsWith('refs/heads/')).length, tags: refs.filter((r) => r.startsWith('refs/tags/')).length };
}

/** Objects and bytes of a copy (`git count-objects -v`: loose and packed objects, their size on disk). */
export async function copySize(dir: string): Promise<{ objects_received: number; bytes_received: number }> {
  const out = await git(['count-objects', '-v'], { cwd: dir });
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(out)?.[1] ?? 0);
  return { objects_received: field('count') + field('in-pack'), bytes_received: (field('size') + field('size-pack')) * 1024 };
}
