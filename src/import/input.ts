import type { FromSchema } from 'json-schema-to-ts';
import { NAME_PATTERN } from '../domain/names.ts';
import { VISIBILITIES } from '../domain/repos.ts';

/** An import request (SPEC §8.1) as the REST API takes it; the web UI's form reads its bounds here too. */
export const NEW_IMPORT = {
  type: 'object',
  additionalProperties: false,
  required: ['source_url', 'target_org', 'name'],
  properties: {
    source_url: { type: 'string', minLength: 1, maxLength: 2048 },
    target_org: { type: 'string', pattern: NAME_PATTERN },
    name: { type: 'string', pattern: NAME_PATTERN },
    visibility: { type: 'string', enum: VISIBILITIES, default: 'private' },
    auth_username: { type: 'string', maxLength: 255 },
    auth_password: { type: 'string', maxLength: 4096 },
    lfs_url: { type: 'string', minLength: 1, maxLength: 2048 },
    mirror: { type: 'boolean', default: false, description: 'Keep the repository a mirror of its source until the cutover (SPEC §8.1.1).' },
    mirror_interval: {
      type: 'string',
      minLength: 1,
      maxLength: 32,
      description: 'How often a mirror syncs: a duration such as 10m or 8h (default 8h, at least 1m); only with mirror.',
    },
  },
} as const;

export type NewImport = FromSchema<typeof NEW_IMPORT>;

/**
 * An import request as createImportJob takes it, from the API, the web UI and the CLI: the
 * organization is given apart, and the visibility is any string (checked there, for the
 * callers without the schema), left out for the default.
 */
export type ImportRequest = Omit<NewImport, 'target_org' | 'visibility' | 'mirror'> & { visibility?: string; mirror?: boolean };
