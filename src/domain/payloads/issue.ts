import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';
import { repoUrl } from './urls.ts';
import type { IssueBody } from './schemas/issue.ts';

/** What the issue payload reads of an issue (the domain's Issue has it). */
export type IssueSubject = Omit<IssueBody['issue'], 'url'>;

/** `issue` payload body (SPEC §6): the issue as it is after the change. */
export function issuePayload(config: Config, repo: Repository, issue: IssueSubject): IssueBody {
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
