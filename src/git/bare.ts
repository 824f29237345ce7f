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
  return settings.map(([key, value]) => {
    const dot = key.indexOf('.');
    return `[${key.slice(0, dot)}]\n\t${key.slice(dot + 1)} = ${value}\n`;
  }).join('');
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

/** Applies Wharf's settings to an existing bare repository (also used after an import moves one in). */
export async function configureRepository(dir: string): Promise<void> {
  for (const [key, value] of REPO_CONFIG) await git(['config', key, value], { cwd: dir });
}
