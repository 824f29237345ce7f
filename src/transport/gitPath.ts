/** A request under a repository's Git path: `/<org>/<repo>[.git]/<rest>`. */
export interface GitPath {
  org: string;
  name: string;
  rest: string;
}

/** The two smart-HTTP services. */
export const GIT_SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);

/**
 * Reads a Git or LFS path. With `.git` every path under the repository is ours (unknown
 * ones are 404); without it only the smart-HTTP and LFS paths are, so other routes
 * (the web UI) keep the rest of `/<org>/<repo>/…`.
 */
export function parseGitPath(path: string): GitPath | null {
  const m = /^\/([^/]+)\/([^/]+)\/(.*)$/.exec(path);
  if (!m) return null;
  const [, org, repo, rest] = m;
  if (repo.endsWith('.git') && repo.length > 4) return { org, name: repo.slice(0, -4), rest };
  if (rest === 'info/refs' || GIT_SERVICES.has(rest) || rest.startsWith('info/lfs/')) return { org, name: repo, rest };
  return null;
}
