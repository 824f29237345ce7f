import { execFile } from 'node:child_process';
import type { Test } from 'tap';
import type { ApiAnswer, TestWharf } from '../helpers/wharf.ts';
import type { Repository } from '../../src/domain/repos.ts';
import { repoDir } from '../../src/git/bare.ts';

/** Asserts a SPEC §4 error body. */
export function isError(t: Test, answer: ApiAnswer, status: number, code: string, paths?: string[]) {
  t.equal(answer.status, status, `status ${status}`);
  t.equal(answer.body?.error?.code, code, `code ${code}`);
  t.ok(Array.isArray(answer.body?.error?.details), 'details is an array');
  t.equal(answer.body?.request_id, answer.headers.get('x-request-id'), 'request id in body and header');
  if (paths) t.same(answer.body.error.details.map((d: { path: string }) => d.path).sort(), [...paths].sort(), `details name ${paths.join(', ')}`);
}

/** Every event of a repository in the outbox, oldest first, payload parsed. */
export async function eventsOf(w: TestWharf, repo: Repository) {
  await w.pushesRecorded();
  const rows = await w.running.services.db('events').where('repository_id', repo.id).orderBy('id');
  return rows.map((r: any) => ({ type: r.type, action: r.action, ref: r.ref, sender_id: r.sender_id, payload: JSON.parse(r.payload) }));
}

/** The common fields every payload carries for this repository and sender. */
export function common(w: TestWharf, repo: Repository, login: string) {
  return {
    repository: {
      id: repo.id,
      name: repo.name,
      full_name: `${repo.org}/${repo.name}`,
      url: `${w.config.baseUrl}/${repo.org}/${repo.name}`,
      visibility: repo.visibility,
      default_branch: repo.default_branch,
    },
    organization: { login: repo.org, url: `${w.config.baseUrl}/${repo.org}` },
    sender: { login, type: 'User' },
  };
}

// A fixed identity through the environment: never the machine's global git config.
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Fixture Author',
  GIT_AUTHOR_EMAIL: 'fixture@example.com',
  GIT_COMMITTER_NAME: 'Fixture Author',
  GIT_COMMITTER_EMAIL: 'fixture@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

/** Runs git in a directory with the fixture identity, feeding stdin; returns trimmed stdout. */
export function gitIn(dir: string, args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd: dir, env: { PATH: process.env.PATH, HOME: '/nonexistent', ...IDENTITY } }, (err, stdout, stderr) =>
      err ? reject(new Error(`git ${args.join(' ')}: ${stderr}`)) : resolve(stdout.trim()),
    );
    // git commands that take no input may exit before reading it.
    child.stdin!.on('error', () => {});
    child.stdin!.end(input);
  });
}

/** The bare directory of a test repository. */
export function bareDir(w: TestWharf, repo: Repository): string {
  return repoDir(w.config.reposDir, repo.org, repo.name);
}

/** Writes a commit with the given files (flat names) on top of `parents`, with git plumbing; returns its sha. */
export async function commitFiles(dir: string, parents: string[], files: Record<string, string>, message: string): Promise<string> {
  const entries: string[] = [];
  for (const [name, content] of Object.entries(files)) {
    const blob = await gitIn(dir, ['hash-object', '-w', '--stdin'], content);
    entries.push(`100644 blob ${blob}\t${name}`);
  }
  const tree = await gitIn(dir, ['mktree'], entries.join('\n') + '\n');
  return gitIn(dir, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message]);
}

/** Points a branch at a commit. */
export async function setBranch(dir: string, branch: string, sha: string): Promise<void> {
  await gitIn(dir, ['update-ref', `refs/heads/${branch}`, sha]);
}
