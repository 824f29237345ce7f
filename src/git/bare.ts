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

/** Creates a bare repository at `dir` with Wharf's settings; fails if it already exists. */
export async function initBareRepository(dir: string, defaultBranch: string): Promise<void> {
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await fs.mkdir(dir); // throws EEXIST rather than adopting a stray directory
  try {
    // No template: its sample hooks would never run (hooks come from Wharf's own hooks path).
    await git(['init', '--quiet', '--bare', '--template=', `--initial-branch=${defaultBranch}`, dir]);
    // A fresh config holds none of these keys, so they are appended in one write rather
    // than one `git config` process each (push to create waits for this).
    await fs.appendFile(path.join(dir, 'config'), configText(REPO_CONFIG));
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Applies Wharf's settings to an existing bare repository (also used after an import moves one in). */
export async function configureRepository(dir: string): Promise<void> {
  for (const [key, value] of REPO_CONFIG) await git(['config', key, value], { cwd: dir });
}
