import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';
import { repoUrl } from './urls.ts';
import type { PullRequestBody } from './schemas/pullRequest.ts';

type Shown = PullRequestBody['pull_request'];

/** What the pull_request payload reads of a pull request (the domain's PullRequest has it). */
export type PullRequestSubject = Pick<Shown, 'number' | 'title' | 'body' | 'state' | 'merged'> & {
  merged_at: number | null;
  head_ref: string;
  head_sha: string;
  base_ref: string;
  base_sha: string;
  author: Shown['user'];
};

/** `pull_request` payload body (SPEC §6): the number and the pull request as it is after the change. */
export function pullRequestPayload(config: Config, repo: Repository, pull: PullRequestSubject): PullRequestBody {
  return {
    number: pull.number,
    pull_request: {
      number: pull.number,
      title: pull.title,
      body: pull.body,
      state: pull.state,
      merged: pull.merged,
      merged_at: pull.merged_at === null ? null : new Date(pull.merged_at).toISOString(),
      head: { ref: pull.head_ref, sha: pull.head_sha },
      base: { ref: pull.base_ref, sha: pull.base_sha },
      user: pull.author,
      url: repoUrl(config, repo, 'pulls', pull.number),
    },
  };
}
