import type { FromSchema } from 'json-schema-to-ts';
import { commitSchema, organizationSchema, repositorySchema, senderSchema, shaSchema } from './common.ts';

/** The `push` payload: one branch or tag a push (or a merge, or a mirror sync) changed. */
export const pushPayloadSchema = {
  title: 'push',
  description: 'A branch or tag was created, moved or deleted: one event per ref a `git push` changes, and the push of a pull-request merge.',
  type: 'object',
  additionalProperties: false,
  required: [
    'event',
    'ref',
    'before',
    'after',
    'created',
    'deleted',
    'forced',
    'commits',
    'total_commits',
    'head_commit',
    'repository',
    'organization',
    'sender',
  ],
  properties: {
    event: { type: 'string', const: 'push' },
    ref: { type: 'string', pattern: '^refs/(heads|tags)/.+$', description: 'The full ref name, e.g. `refs/heads/main` or `refs/tags/v1.0`.' },
    before: { ...shaSchema, description: 'The value before the push (40 zeros when the ref was created); for an annotated tag, the tag object.' },
    after: { ...shaSchema, description: 'The value after the push (40 zeros when the ref was deleted); for an annotated tag, the tag object.' },
    created: { type: 'boolean' },
    deleted: { type: 'boolean' },
    forced: { type: 'boolean', description: 'True when the new value does not contain the old one (a force push).' },
    commits: {
      type: 'array',
      maxItems: 2048,
      items: commitSchema,
      description: 'The new commits this ref reaches, oldest first, each listed by one event of a push only; at most 2048 (the newest).',
    },
    total_commits: { type: 'integer', minimum: 0, description: 'Every new commit reachable from this ref, listed here or not.' },
    head_commit: { ...commitSchema, type: ['object', 'null'], description: 'The commit the ref now points at (peeled for a tag); null when deleted.' },
    repository: repositorySchema,
    organization: organizationSchema,
    sender: senderSchema,
  },
} as const;

/** A `push` payload. */
export type PushPayload = FromSchema<typeof pushPayloadSchema>;
