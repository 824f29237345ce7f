import { named } from './route.ts';
import { MAX_INT } from './params.ts';
import { VISIBILITIES } from '../domain/repos.ts';

/** SPEC §4: the one body of every error answer. */
export const ErrorSchema = named('Error', {
  type: 'object',
  additionalProperties: false,
  required: ['error', 'request_id'],
  properties: {
    error: {
      type: 'object',
      additionalProperties: false,
      required: ['code', 'message', 'details'],
      properties: {
        code: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', description: 'Stable snake_case code.' },
        message: { type: 'string' },
        details: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['path', 'message'],
            properties: { path: { type: 'string', description: 'JSON Pointer into the request.' }, message: { type: 'string' } },
          },
        },
      },
    },
    request_id: { type: 'string' },
  },
} as const);

/** An id or number of a 32-bit column. */
export const ID = { type: 'integer', minimum: 1, maximum: MAX_INT } as const;

/** An ISO 8601 time. */
export const TIME = { type: 'string', format: 'date-time' } as const;

/** An ISO 8601 time, or null. */
export const TIME_OR_NULL = { type: ['string', 'null'], format: 'date-time' } as const;

/** A string or null. */
export const TEXT_OR_NULL = { type: ['string', 'null'] } as const;

/** An integer or null. */
export const INT_OR_NULL = { type: ['integer', 'null'] } as const;

/** A name in a path (organization, repository): looked up as given, a 404 when nothing has it. */
const PATH_NAME = { type: 'string' } as const;

/** The path parameters of a repository route: org, repo and, when named, a number or id. */
export function repoParams<const K extends string>(key: K) {
  return {
    type: 'object',
    required: ['org', 'repo', key],
    properties: { org: PATH_NAME, repo: PATH_NAME, [key]: ID } as { org: typeof PATH_NAME; repo: typeof PATH_NAME } & { [P in K]: typeof ID },
  } as const;
}

/** The path parameters of an organization's route naming one id. */
export function orgParams<const K extends string>(key: K) {
  return {
    type: 'object',
    required: ['org', key],
    properties: { org: PATH_NAME, [key]: ID } as { org: typeof PATH_NAME } & { [P in K]: typeof ID },
  } as const;
}

/** The path parameters of a route naming one id. */
export function idParams<const K extends string>(key: K) {
  return { type: 'object', required: [key], properties: { [key]: ID } as { [P in K]: typeof ID } } as const;
}

/** A pull mirror's state (SPEC §8.1.1), or null for a repository that is not a mirror. */
export const MirrorSchema = named('Mirror', {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['source_url', 'interval', 'last_sync_at', 'last_sync_status', 'last_error', 'next_sync_at'],
  properties: {
    source_url: { type: 'string', description: 'The source, without credentials.' },
    interval: { type: 'string', description: 'How often it syncs (a duration such as 8h).' },
    last_sync_at: TIME_OR_NULL,
    last_sync_status: { type: ['string', 'null'], enum: ['succeeded', 'failed', null] },
    last_error: { ...TEXT_OR_NULL, description: 'Why the last sync failed (credentials removed); null after a success.' },
    next_sync_at: { ...TIME_OR_NULL, description: 'When the next scheduled sync is due; null when the mirror is parked.' },
  },
} as const);

/** The answer of `GET /repos/{org}/{repo}` and the other repository answers (see present.ts). */
export const RepositorySchema = named('Repository', {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'full_name', 'owner', 'visibility', 'private', 'default_branch', 'description', 'url', 'clone_url', 'created_at', 'updated_at'],
  properties: {
    id: ID,
    name: { type: 'string' },
    full_name: { type: 'string' },
    owner: {
      type: 'object',
      additionalProperties: false,
      required: ['login', 'type'],
      properties: { login: { type: 'string' }, type: { type: 'string', const: 'Organization' } },
    },
    visibility: { type: 'string', enum: VISIBILITIES },
    private: { type: 'boolean' },
    default_branch: { type: 'string' },
    description: TEXT_OR_NULL,
    url: { type: 'string', format: 'uri' },
    clone_url: { type: 'string', format: 'uri' },
    created_at: TIME,
    updated_at: TIME,
    // Always present in the answers of GET /repos/{org}/{repo} and of the cutover.
    mirror: MirrorSchema,
  },
} as const);

/** A list of one schema. */
export function listOf<const S>(items: S) {
  return { type: 'array', items } as const;
}
