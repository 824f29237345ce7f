import type { FromSchema } from 'json-schema-to-ts';
import { idSchema, organizationSchema, repositorySchema, senderSchema, type BodyOf } from './common.ts';

/** The `issue` event's actions (SPEC §6). */
export const ISSUE_ACTIONS = ['opened', 'edited', 'closed', 'reopened'] as const;

/** The `issue` payload: an issue as it is after the change. */
export const issuePayloadSchema = {
  title: 'issue',
  description: 'An issue was opened, edited, closed or reopened.',
  type: 'object',
  additionalProperties: false,
  required: ['event', 'action', 'issue', 'repository', 'organization', 'sender'],
  properties: {
    event: { type: 'string', const: 'issue' },
    action: { type: 'string', enum: ISSUE_ACTIONS },
    issue: {
      type: 'object',
      additionalProperties: false,
      required: ['number', 'title', 'body', 'state', 'labels', 'assignees', 'url'],
      properties: {
        number: { ...idSchema, description: 'Per repository; issues and pull requests share one sequence.' },
        title: { type: 'string' },
        body: { type: 'string', description: 'Markdown; empty when none was given.' },
        state: { type: 'string', enum: ['open', 'closed'] },
        labels: { type: 'array', items: { type: 'string' }, description: 'Label names.' },
        assignees: { type: 'array', items: { type: 'string' }, description: 'Logins.' },
        url: { type: 'string', format: 'uri', description: 'The issue page.' },
      },
    },
    repository: repositorySchema,
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** An `issue` payload. */
export type IssuePayload = FromSchema<typeof issuePayloadSchema>;

/** What the `issue` builder returns: the fields beyond the common ones. */
export type IssueBody = BodyOf<typeof issuePayloadSchema>;
