import type { FromSchema } from 'json-schema-to-ts';
import { idSchema, organizationSchema, repositorySchema, senderSchema, shaSchema, userLoginSchema, type BodyOf } from './common.ts';

/** The `pull_request` event's actions (SPEC §6). */
export const PULL_REQUEST_ACTIONS = ['opened', 'edited', 'closed', 'reopened', 'synchronize'] as const;

/** A branch end of a pull request. */
const branchSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ref', 'sha'],
  properties: { ref: { type: 'string', description: 'Short branch name.' }, sha: shaSchema },
} as const;

/** The `pull_request` payload: the pull request as it is after the change. */
export const pullRequestPayloadSchema = {
  title: 'pull_request',
  description: 'A pull request was opened, edited, closed (merged or not), reopened, or its head branch was pushed to (`synchronize`).',
  type: 'object',
  additionalProperties: false,
  required: ['event', 'action', 'number', 'pull_request', 'repository', 'organization', 'sender'],
  properties: {
    event: { type: 'string', const: 'pull_request' },
    action: { type: 'string', enum: PULL_REQUEST_ACTIONS },
    number: idSchema,
    pull_request: {
      type: 'object',
      additionalProperties: false,
      required: ['number', 'title', 'body', 'state', 'merged', 'merged_at', 'head', 'base', 'user', 'url'],
      properties: {
        number: idSchema,
        title: { type: 'string' },
        body: { type: 'string', description: 'Markdown; empty when none was given.' },
        state: { type: 'string', enum: ['open', 'closed'] },
        merged: { type: 'boolean', description: 'True once merged (then `state` is `closed`).' },
        merged_at: { type: ['string', 'null'], format: 'date-time' },
        head: { ...branchSchema, description: 'The branch with the changes, at its current commit.' },
        base: { ...branchSchema, description: 'The branch the changes go into, at its current commit.' },
        user: { ...userLoginSchema, description: 'The author; null when the account no longer exists.' },
        url: { type: 'string', format: 'uri', description: 'The pull request page.' },
      },
    },
    repository: repositorySchema,
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** A `pull_request` payload. */
export type PullRequestPayload = FromSchema<typeof pullRequestPayloadSchema>;

/** What the `pull_request` builder returns: the fields beyond the common ones. */
export type PullRequestBody = BodyOf<typeof pullRequestPayloadSchema>;
