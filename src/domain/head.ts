import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../db/connect.ts';
import type { Repository } from './repos.ts';
import { git } from '../git/run.ts';

/** The branch HEAD should name when it names a missing one: the only branch, else main, else master. */
export function chooseDefaultBranch(branches: string[]): string | undefined {
  if (branches.length === 1) return branches[0];
  return ['main', 'master'].find((b) => branches.includes(b));
}

/**
 * After a push: when HEAD names a branch that does not exist (a first push of a
 * `master` repository into a `main` one, say), points HEAD at a sensible branch and
 * records it as the repository's default branch, as GitHub does on a first push.
 * `refs`, when given, are the repository's refs (as the push log lists them), which
 * saves listing them again. Returns the repository as it now is.
 */
export async function settleHead(db: Db, dir: string, repo: Repository, refs?: Map<string, string>): Promise<Repository> {
  const target = await headTarget(dir);
  const branches = refs
    ? [...refs.keys()].filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice('refs/heads/'.length))
    : (await git(['for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads/'], { cwd: dir })).split('\n').filter(Boolean);
  const current = target.replace(/^refs\/heads\//, '');
  if (branches.includes(current)) {
    if (repo.default_branch === current) return repo;
  } else {
    const chosen = chooseDefaultBranch(branches);
    if (!chosen) return repo;
    await git(['symbolic-ref', 'HEAD', `refs/heads/${chosen}`], { cwd: dir });
    if (repo.default_branch === chosen) return repo;
    return updateDefaultBranch(db, repo, chosen);
  }
  return updateDefaultBranch(db, repo, current);
}

async function updateDefaultBranch(db: Db, repo: Repository, branch: string): Promise<Repository> {
  const now = Date.now();
  await db('repositories').where('id', repo.id).update({ default_branch: branch, updated_at: now });
  return { ...repo, default_branch: branch, updated_at: now };
}

/** The ref HEAD names: read from the HEAD file when it is a plain symref (the common case), else asked of git. */
async function headTarget(dir: string): Promise<string> {
  const text = await fs.readFile(path.join(dir, 'HEAD'), 'utf8').catch(() => '');
  const symref = /^ref: (refs\/heads\/\S+)\n?$/.exec(text);
  if (symref) return symref[1];
  return (await git(['symbolic-ref', '--quiet', 'HEAD'], { cwd: dir }).catch(() => '')).trim();
}
