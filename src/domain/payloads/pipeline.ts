import type { Config } from '../../config.ts';
import type { Repository } from '../repos.ts';
import { repoUrl } from './urls.ts';
import type { PipelineBody } from './schemas/pipeline.ts';

type Shown = PipelineBody['pipeline'];

/** What the pipeline payload reads: the pipeline (the domain's Pipeline has it) and its status before. */
export interface PipelineSubject {
  pipeline: Omit<Shown, 'previous_status' | 'url'>;
  previousStatus: Shown['previous_status'];
}

/** `pipeline` payload body (SPEC §6): the pipeline with its new status and the one before (null when it was just created). */
export function pipelinePayload(config: Config, repo: Repository, subject: PipelineSubject): PipelineBody {
  const { pipeline } = subject;
  return {
    pipeline: {
      id: pipeline.id,
      name: pipeline.name,
      ref: pipeline.ref,
      sha: pipeline.sha,
      status: pipeline.status,
      previous_status: subject.previousStatus,
      url: repoUrl(config, repo, 'pipelines', pipeline.id),
    },
  };
}
