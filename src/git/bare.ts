import fs from 'node:fs/promises';
import path from 'node:path';
import { git } from './run.ts';

/** Path of a repository's bare directory under REPOS_DIR. */
export function repoDir(reposDir: string, org: string, name: string): string {
  return path.join(reposDir, org, `${name}.git`);
}

/** Settings every hosted bare repository carries. */
const REPO_CONFIG: [string, string][] = [
  ['receive.fsckObjects', 'true'], // a corrupt pack is refused and refs stay unchanged
  ['http.receivepack', 'true'],
  ['uploadpack.allowFilter', 'true'],
  ['uploadpack.allowAnySHA1InWant', 'false'],
  ['core.logAllRefUpdates', 'false'],
];

/** Settings as git config file text, one section per key. */
function configText(settings: [string, string][]): string {
  return settings
    .map(([key, value]) => {
      const dot = key.indexOf('.');
      return `[${key.slice(0, dot)}]\n\t${key.slice(dot + 1)} = ${value}\n`;
    })
    .join('');
}

/** Branch names plain enough to write into HEAD as they are (no dots, so none of git's `..`, `.lock` or dot rules apply). */
const PLAIN_BRANCH = /^[A-Za-z0-9_][A-Za-z0-9_-]*(\/[A-Za-z0-9_][A-Za-z0-9_-]*)*$/;

/**
 * Creates a bare repository at `dir` with Wharf's settings; fails if it already exists.
 * With a plain default branch it writes the layout `git init --bare --template=` would
 * (HEAD, config, objects/, refs/; see gitrepository-layout), which spares push-to-create a
 * git process; any other name goes through `git init`, which checks it.
 */
export async function initBareRepository(dir: string, defaultBranch: string): Promise<void> {
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await fs.mkdir(dir); // throws EEXIST rather than adopting a stray directory
  try {
    if (PLAIN_BRANCH.test(defaultBranch)) {
      for (const sub of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) await fs.mkdir(path.join(dir, sub), { recursive: true });
      await fs.writeFile(path.join(dir, 'config'), configText([['core.repositoryformatversion', '0'], ['core.bare', 'true'], ...REPO_CONFIG]));
      // Written last: git takes a directory for a repository once HEAD is there.
      await fs.writeFile(path.join(dir, 'HEAD'), `ref: refs/heads/${defaultBranch}\n`);
    } else {
      // No template: its sample hooks would never run (hooks come from Wharf's own hooks path).
      await git(['init', '--quiet', '--bare', '--template=', `--initial-branch=${defaultBranch}`, dir]);
      // A fresh config holds none of these keys, so they are appended in one write.
      await fs.appendFile(path.join(dir, 'config'), configText(REPO_CONFIG));
    }
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Applies Wharf's settings to an existing bare repository (an import, once it is moved
 * in). One git reads which of them are set; the missing ones, the usual case, are
 * appended in one write, and only a setting present with another value costs a
 * `git config` of its own.
 */
export async function configureRepository(dir: string): Promise<void> {
  // git lists keys with their section and name in lower case.
  const pattern = `^(${REPO_CONFIG.map(([key]) => key.toLowerCase().replace('.', '\\.')).join('|')})$`;
  const out = await git(['config', '--local', '--get-regexp', pattern], { cwd: dir }).catch((err) => {
    if (err?.exitCode === 1) return ''; // none of them set
    throw err;
  });
  const current = new Map<string, string>();
  for (const line of out.split('\n').filter(Boolean)) {
    const space = line.indexOf(' ');
    current.set(line.slice(0, space).toLowerCase(), line.slice(space + 1));
  }
  const missing = REPO_CONFIG.filter(([key]) => !current.has(key.toLowerCase()));
  if (missing.length > 0) await fs.appendFile(path.join(dir, 'config'), configText(missing));
  for (const [key, value] of REPO_CONFIG) {
    const was = current.get(key.toLowerCase());
    if (was !== undefined && was !== value) await git(['config', key, value], { cwd: dir });
  }
}

/**
 * Housekeeping after a push, nobody waiting on it: git's `gc --auto` (which the backend no
 * longer runs inside receive-pack, transport/git/cgi.ts), to completion rather than
 * detached so the two never race, then, when `packRefs`, `git pack-refs --all --prune`.
 * A push of thousands of refs leaves as many files, and every page that lists refs then
 * reads each one (about 60 ms for 7,000 tags, against 10 ms packed); `gc --auto` packs
 * them only when objects pile up, which a single big pack never does. Safe beside other
 * pushes: git takes the packed-refs lock and waits for it as a ref update does. Both run
 * at the lowest CPU priority: pruning 5,000 loose refs costs 2.5–2.8 s of system time on a
 * small machine, which would otherwise be taken from the push's own deliveries going out
 * at the same time.
 */
export async function tidyAfterPush(dir: string, packRefs: boolean): Promise<void> {
  await git(['-c', 'gc.autoDetach=false', 'gc', '--auto', '--quiet'], { cwd: dir, background: true });
  if (packRefs) await git(['pack-refs', '--all', '--prune'], { cwd: dir, background: true });
}
