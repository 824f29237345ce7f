import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';
import type { Issue } from '../issues.ts';
import { repoUrl } from './urls.ts';
import type { IssueBody } from './schemas/issue.ts';

/** `issue` payload body (SPEC §6): the issue as it is after the change. */
export function issuePayload(config: Config, repo: Repository, issue: Issue): IssueBody {
  return {
    issue: {
      number: issue.number,
      title: issue.title,
      body: issue.body,
      state: issue.state,
      labels: issue.labels,
      assignees: issue.assignees,
      url: repoUrl(config, repo, 'issues', issue.number),
    },
  };
}
