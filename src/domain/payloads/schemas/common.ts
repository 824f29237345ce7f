import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * The parts every webhook payload shares (SPEC §6), as JSON Schema (draft 2020-12, the
 * dialect of OpenAPI 3.1). The event schemas embed these objects, so one change here
 * changes every payload's contract and, through FromSchema, every builder's type.
 */

/** A git object id: SHA-1 (40 hex) or SHA-256 (64 hex), lowercase; 40 zeros for a ref that did not exist or no longer does. */
export const shaSchema = { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$', description: 'A git object id, lowercase hex.' } as const;

/** A positive integer id (database ids and issue numbers). */
export const idSchema = { type: 'integer', minimum: 1 } as const;

/** A user as payloads name one: the login, or null when the account no longer exists. */
export const userLoginSchema = { type: ['string', 'null'], description: 'The login of the user, null when the account no longer exists.' } as const;

/** The `repository` object of every payload. */
export const repositorySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'full_name', 'url', 'visibility', 'default_branch'],
  properties: {
    id: idSchema,
    name: { type: 'string', description: 'The repository name, without the organization.' },
    full_name: { type: 'string', pattern: '^[^/]+/[^/]+$', description: '`<org>/<repo>`.' },
    url: { type: 'string', format: 'uri', description: 'The repository page.' },
    visibility: { type: 'string', enum: ['public', 'internal', 'private'] },
    default_branch: { type: 'string', description: 'Short branch name, e.g. `main`.' },
  },
} as const;

/** The `organization` object of every payload: the organization of the repository (SPEC §5.4). */
export const organizationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['login', 'url'],
  properties: {
    login: { type: 'string', description: 'The organization name.' },
    url: { type: 'string', format: 'uri', description: 'The organization page.' },
  },
} as const;

/** The `sender` object of every payload: who caused the event (`ghost` when the account is gone). */
export const senderSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['login', 'type'],
  properties: {
    login: { type: 'string', description: 'The login of the user who caused the event; `ghost` when the account no longer exists.' },
    type: { type: 'string', const: 'User' },
  },
} as const;

/** A commit as `push` payloads list it. */
export const commitSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'message', 'timestamp', 'url', 'distinct', 'author'],
  properties: {
    id: shaSchema,
    message: { type: 'string', description: 'The full commit message, trailing newlines removed.' },
    timestamp: { type: 'string', format: 'date-time', description: "The author date, with the author's UTC offset." },
    url: { type: 'string', format: 'uri', description: 'The commit page.' },
    distinct: { type: 'boolean', description: 'True when this push event is the first to list the commit (always true in `commits`).' },
    author: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'email'],
      properties: { name: { type: 'string' }, email: { type: 'string', description: 'As recorded in the commit; git does not check it is an address.' } },
    },
  },
} as const;

/** The fields every payload has; builders return the rest. */
export type CommonField = 'event' | 'action' | 'repository' | 'organization' | 'sender';

/** The type of a payload schema's fields beyond the common ones: what a builder returns. */
export type BodyOf<S extends JSONSchema> = Omit<FromSchema<S>, CommonField>;

/** The `repository` object's type. */
export type RepositoryPayload = FromSchema<typeof repositorySchema>;

/** The `sender` object's type. */
export type SenderPayload = FromSchema<typeof senderSchema>;

/** A push commit's type. */
export type CommitPayload = FromSchema<typeof commitSchema>;

/** The `organization` object's type. */
export type OrganizationPayload = FromSchema<typeof organizationSchema>;
