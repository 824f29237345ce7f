import type { FromSchema } from 'json-schema-to-ts';
import { VISIBILITIES } from '../visibility.ts';
import { NAME } from './text.ts';
import { worded } from '../../util/schema.ts';

/** A repository to create in an organization. */
export const NEW_REPOSITORY = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: NAME,
    visibility: { type: 'string', enum: VISIBILITIES, default: 'private' },
    description: { type: 'string', maxLength: 1000 },
    // git's branch name rules (check-ref-format) within a safe alphabet: no leading '-', no
    // '..' or '//', no leading, trailing or repeated '/', no component starting with '.'
    // or ending with '.lock', no trailing '.'.
    default_branch: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      pattern: worded(
        '^(?!-)(?!/)(?!.*//)(?!.*/$)(?!.*\\.\\.)(?!.*\\.$)(?!(.*/)?\\.)(?!.*\\.lock(/|$))[A-Za-z0-9._/-]+$',
        'must be a branch name: letters, digits, ".", "_", "-" and "/"; not starting with "-" or "/", no "..", "//" or part starting with "." or ending in ".lock", not ending in "/" or "."',
      ),
    },
  },
} as const;

/** A repository to create; a field left out takes the schema's default, which the domain applies for callers without the schema. */
export type NewRepository = FromSchema<typeof NEW_REPOSITORY, { keepDefaultedPropertiesOptional: true }>;
