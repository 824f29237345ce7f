import type { Services } from '../services.ts';
import type { User } from './accounts.ts';
import type { Repository } from './repos.ts';
import { insertedId } from '../db/results.ts';
import { findIssue } from './issues.ts';
import { commitExists } from './refs.ts';
import { withEvents } from './produce.ts';
import { producerEvent } from './payloads/index.ts';
import { validationFailed } from '../errors/wharfError.ts';
import type { NewAgentAction } from './inputs/agentActions.ts';

export type AgentTargetType = 'issue' | 'pull_request' | 'commit';

/** Something an automated agent did to an issue, a pull request or a commit. */
export interface AgentAction {
  id: number;
  name: string;
  action: string;
  summary: string;
  /** `id` is the issue or pull request number, or the commit's full sha. */
  target: { type: AgentTargetType; id: number | string };
  created_at: number;
}

/** Checks that the target exists in the repository: 422 naming `/target/id` otherwise. */
async function checkTarget(services: Services, repo: Repository, target: NewAgentAction['target']): Promise<void> {
  const bad = (message: string) => validationFailed([{ path: '/target/id', message }]);
  if (target.type === 'commit') {
    if (typeof target.id !== 'string' || !(await commitExists(services.config, repo, target.id)))
      throw bad('must be the full sha of a commit in this repository');
    return;
  }
  const kind = target.type === 'issue' ? 'issue' : 'pull';
  if (typeof target.id !== 'number' || !(await findIssue(services.db, repo, target.id, kind))) {
    throw bad(`must be the number of ${target.type === 'issue' ? 'an issue' : 'a pull request'} in this repository`);
  }
}

/** Records an agent's action, raising `agent performed`. */
export async function recordAgentAction(services: Services, repo: Repository, sender: User, input: NewAgentAction): Promise<AgentAction> {
  await checkTarget(services, repo, input.target);
  return withEvents(services, async (trx, raise) => {
    const now = Date.now();
    const [row] = await trx('agent_actions')
      .insert({
        repository_id: repo.id,
        name: input.name,
        action: input.action,
        summary: input.summary,
        target_type: input.target.type,
        target_id: String(input.target.id),
        author_id: sender.id,
        created_at: now,
      })
      .returning('id');
    const action: AgentAction = { id: insertedId(row), ...input, created_at: now };
    raise(producerEvent(services.config, 'agent', 'performed', repo, sender, action));
    return action;
  });
}
