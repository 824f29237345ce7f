import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';
import type { AgentBody } from './schemas/agent.ts';

/** `agent` payload body (SPEC §6): what an automated agent did and to what. */
export function agentPayload(_config: Config, _repo: Repository, action: AgentBody['agent']): AgentBody {
  return { agent: { name: action.name, action: action.action, summary: action.summary, target: { type: action.target.type, id: action.target.id } } };
}
