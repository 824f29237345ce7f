import type { Config } from '../../config.ts';
import type { Visibility } from '../visibility.ts';

/** What payloads read of a repository (the domain's Repository has it; no import of repos.ts, which raises events itself). */
export interface RepositoryFields {
  id: number;
  org: string;
  name: string;
  visibility: Visibility;
  default_branch: string;
}
import type { OrganizationPayload, RepositoryPayload, SenderPayload } from './schemas/common.ts';

/** The `repository` object every payload carries (SPEC §6). */
export function repositoryPayload(config: Config, repo: RepositoryFields): RepositoryPayload {
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
export function senderPayload(user: { login: string } | null): SenderPayload {
  return { login: user?.login ?? 'ghost', type: 'User' };
}

/** The `organization` object every payload carries (SPEC §5.4: every repository belongs to one, as on GitHub for organization-owned repositories). */
export function organizationPayload(config: Config, login: string): OrganizationPayload {
  return { login, url: `${config.baseUrl}/${login}` };
}
