import type { Services } from '../services.ts';
import type { Db } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import type { User } from './accounts.ts';
import type { Repository } from './repos.ts';
import { insertedId } from '../db/results.ts';
import { withEvents } from './produce.ts';
import { producerEvent } from './payloads/index.ts';
import { PIPELINE_STATUSES } from './payloads/schemas/pipeline.ts';
import type { NewPipeline } from './inputs/pipelines.ts';

/** A pipeline's statuses: the payload schema's list, so the two cannot differ. */
export { PIPELINE_STATUSES };
export type PipelineStatus = (typeof PIPELINE_STATUSES)[number];

/** A CI pipeline run reported by an outside system. */
export interface Pipeline {
  id: number;
  name: string;
  ref: string;
  sha: string;
  status: PipelineStatus;
  created_at: number;
  updated_at: number;
}

/** A `pipelines` row as either driver gives it. */
interface PipelineRow {
  id: number;
  name: string;
  ref: string;
  sha: string;
  status: PipelineStatus;
  created_at: DbInt;
  updated_at: DbInt;
}

function toPipeline(r: PipelineRow): Pipeline {
  return { id: Number(r.id), name: r.name, ref: r.ref, sha: r.sha, status: r.status, created_at: Number(r.created_at), updated_at: Number(r.updated_at) };
}

/** A pipeline of a repository by id, or undefined. */
export async function findPipeline(db: Db, repo: Repository, id: number): Promise<Pipeline | undefined> {
  const row = await db('pipelines').where({ id, repository_id: repo.id }).first();
  return row ? toPipeline(row) : undefined;
}

/** A page of a repository's pipelines, newest first; `before` is the id to continue below. */
export async function listPipelines(db: Db, repo: Repository, options: { limit: number; before?: number }): Promise<Pipeline[]> {
  const q = db('pipelines').where('repository_id', repo.id).orderBy('id', 'desc').limit(options.limit);
  if (options.before !== undefined) q.where('id', '<', options.before);
  return (await q).map(toPipeline);
}

/** Records a new pipeline, raising `pipeline status_changed` with no previous status. */
export async function createPipeline(services: Services, repo: Repository, author: User, input: NewPipeline): Promise<Pipeline> {
  return withEvents(services, async (trx, raise) => {
    const now = Date.now();
    const [row] = await trx('pipelines')
      .insert({ repository_id: repo.id, ...input, author_id: author.id, created_at: now, updated_at: now })
      .returning('*');
    const pipeline = toPipeline(typeof row === 'object' ? row : await trx('pipelines').where('id', insertedId(row)).first());
    raise(producerEvent(services.config, 'pipeline', 'status_changed', repo, author, { pipeline, previousStatus: null }));
    return pipeline;
  });
}

/** Sets a pipeline's status, raising `pipeline status_changed` only when it really changes; undefined when there is no such pipeline. */
export async function setPipelineStatus(services: Services, repo: Repository, sender: User, id: number, status: PipelineStatus): Promise<Pipeline | undefined> {
  return withEvents(services, async (trx, raise) => {
    const row = await trx('pipelines').where({ id, repository_id: repo.id }).first();
    if (!row) return undefined;
    const before = toPipeline(row);
    if (before.status === status) return before;
    const pipeline = { ...before, status, updated_at: Date.now() };
    await trx('pipelines').where('id', id).update({ status, updated_at: pipeline.updated_at });
    raise(producerEvent(services.config, 'pipeline', 'status_changed', repo, sender, { pipeline, previousStatus: before.status }));
    return pipeline;
  });
}
