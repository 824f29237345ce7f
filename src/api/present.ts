import type { Config } from '../config.ts';
import type { Repository } from '../domain/repos.ts';
import { formatInterval, NEVER, type Mirror } from '../pullMirrors/state.ts';
import type { Answer } from './route.ts';
import type { MirrorSchema, RepositorySchema } from './schemas.ts';

/** Epoch milliseconds as ISO 8601, null kept. */
export function iso(ms: number | string): string;
export function iso(ms: number | string | null | undefined): string | null;
export function iso(ms: number | string | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
}

/** The API form of a repository. */
export function presentRepository(config: Config, repo: Repository): Answer<typeof RepositorySchema> {
  const fullName = `${repo.org}/${repo.name}`;
  return {
    id: repo.id,
    name: repo.name,
    full_name: fullName,
    owner: { login: repo.org, type: 'Organization' },
    visibility: repo.visibility,
    private: repo.visibility !== 'public',
    default_branch: repo.default_branch,
    description: repo.description,
    url: `${config.baseUrl}/${fullName}`,
    clone_url: `${config.baseUrl}/${fullName}.git`,
    created_at: iso(repo.created_at),
    updated_at: iso(repo.updated_at),
  };
}

/** A pull mirror's state as the repository answer shows it (never its credentials), or null. */
export function presentMirror(mirror: Mirror | undefined): Answer<typeof MirrorSchema> {
  if (!mirror) return null;
  return {
    source_url: mirror.sourceUrl,
    interval: formatInterval(mirror.intervalMs),
    last_sync_at: iso(mirror.lastSyncAt),
    last_sync_status: mirror.lastSyncStatus,
    last_error: mirror.lastError,
    next_sync_at: mirror.nextSyncAt >= NEVER ? null : iso(mirror.nextSyncAt),
  };
}
