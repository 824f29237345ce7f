import { worded } from '../../util/schema.ts';
/** A full commit sha (SHA-1 or SHA-256), lower case. */
export const SHA = {
  type: 'string',
  pattern: worded('^[0-9a-f]{40}([0-9a-f]{24})?$', 'must be a commit id: 40 (or 64) lowercase hexadecimal digits'),
} as const;
