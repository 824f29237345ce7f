import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';
import type { ReleaseBody } from './schemas/release.ts';

/** What the release payload reads of a release (the domain's Release has it). */
export type ReleaseSubject = Omit<ReleaseBody['release'], 'published_at'> & { published_at: number | null };

/** `release` payload body (SPEC §6). */
export function releasePayload(_config: Config, _repo: Repository, release: ReleaseSubject): ReleaseBody {
  return {
    release: {
      id: release.id,
      tag_name: release.tag_name,
      name: release.name,
      body: release.body,
      draft: release.draft,
      prerelease: release.prerelease,
      target_commitish: release.target_commitish,
      published_at: release.published_at === null ? null : new Date(release.published_at).toISOString(),
      author: release.author,
    },
  };
}
