import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';

/** The web address of something inside a repository, e.g. `…/acme/app/issues/3`. */
export function repoUrl(config: Config, repo: Repository, ...parts: (string | number)[]): string {
  return [`${config.baseUrl}/${repo.org}/${repo.name}`, ...parts.map((p) => encodeURIComponent(String(p)))].join('/');
}
