import type { Config } from '../../config.ts';
import type { User } from '../accounts.ts';
import type { Repository } from '../repos.ts';
import { organizationPayload, repositoryPayload, senderPayload } from './common.ts';
import type { NewEvent } from '../../events/types.ts';
import { agentPayload } from './agent.ts';
import { commentPayload } from './comment.ts';
import { issuePayload } from './issue.ts';
import { pipelinePayload } from './pipeline.ts';
import { pullRequestPayload } from './pullRequest.ts';
import { releasePayload } from './release.ts';
import type { AGENT_ACTIONS } from './schemas/agent.ts';
import type { COMMENT_ACTIONS } from './schemas/comment.ts';
import type { ISSUE_ACTIONS } from './schemas/issue.ts';
import type { PIPELINE_ACTIONS } from './schemas/pipeline.ts';
import type { PULL_REQUEST_ACTIONS } from './schemas/pullRequest.ts';
import type { RELEASE_ACTIONS } from './schemas/release.ts';

/** One small builder per event type a producer raises; each returns the fields beyond the common ones. */
const BUILDERS = {
  issue: issuePayload,
  comment: commentPayload,
  pull_request: pullRequestPayload,
  release: releasePayload,
  pipeline: pipelinePayload,
  agent: agentPayload,
} as const;

type Of<A extends readonly string[]> = A[number];

/** The action values of each producer event type (SPEC §6): the enums of the payload schemas. */
export interface Actions {
  issue: Of<typeof ISSUE_ACTIONS>;
  comment: Of<typeof COMMENT_ACTIONS>;
  pull_request: Of<typeof PULL_REQUEST_ACTIONS>;
  release: Of<typeof RELEASE_ACTIONS>;
  pipeline: Of<typeof PIPELINE_ACTIONS>;
  agent: Of<typeof AGENT_ACTIONS>;
}

/** Who caused an event; null when the user is gone (shown as `ghost`). */
export type Sender = Pick<User, 'id' | 'login'> | null;

type ProducedType = keyof typeof BUILDERS;
type Subject<K extends ProducedType> = Parameters<(typeof BUILDERS)[K]>[2];

/** An outbox event of a producer: `event`, `action`, `repository` and `sender`, plus what the type's builder adds. */
export function producerEvent<K extends ProducedType>(
  config: Config,
  type: K,
  action: Actions[K],
  repo: Repository,
  sender: Sender,
  subject: Subject<K>,
): NewEvent {
  const build = BUILDERS[type] as (config: Config, repo: Repository, subject: Subject<K>) => Record<string, unknown>;
  return {
    repositoryId: repo.id,
    type,
    action,
    senderId: sender?.id ?? null,
    payload: {
      event: type,
      action,
      ...build(config, repo, subject),
      repository: repositoryPayload(config, repo),
      organization: organizationPayload(config, repo.org),
      sender: senderPayload(sender),
    },
  };
}
