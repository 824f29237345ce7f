import type { Config } from '../config.ts';
import type { Repository } from '../domain/repos.ts';

/** The `repository` object every payload carries (SPEC §6). */
export function repositoryPayload(config: Config, repo: Repository) {
  const fullName = `${repo.org}/${repo.name}`;
  return {
    id: repo.id,
    name: repo.name,
    full_name: fullName,
    url: `${config.baseUrl}/${fullName}`,
    visibility: repo.visibility,
    default_branch: repo.default_branch,
  };
}

/** The `sender` object every payload carries (SPEC §6). */
export function senderPayload(user: { login: string } | null) {
  return { login: user?.login ?? 'ghost', type: 'User' as const };
}
