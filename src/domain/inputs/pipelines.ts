import type { FromSchema } from 'json-schema-to-ts';
import { PIPELINE_STATUSES } from '../payloads/schemas/pipeline.ts';
import { SHA } from './git.ts';
import { text } from './text.ts';

/** A pipeline's status. */
export const PIPELINE_STATUS = { type: 'string', enum: PIPELINE_STATUSES } as const;

/** A pipeline run to record. */
export const NEW_PIPELINE = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'ref', 'sha'],
  properties: { name: text(1, 255), ref: text(1, 1024), sha: SHA, status: { ...PIPELINE_STATUS, default: 'queued' } },
} as const;

/** A pipeline run's new status. */
export const STATUS_CHANGE = { type: 'object', additionalProperties: false, required: ['status'], properties: { status: PIPELINE_STATUS } } as const;

export type NewPipeline = FromSchema<typeof NEW_PIPELINE>;
export type StatusChange = FromSchema<typeof STATUS_CHANGE>;
