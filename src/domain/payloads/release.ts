import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';
import type { Release } from '../releases.ts';
import type { ReleaseBody } from './schemas/release.ts';

/** `release` payload body (SPEC §6). */
export function releasePayload(_config: Config, _repo: Repository, release: Release): ReleaseBody {
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
