import type { FromSchema } from 'json-schema-to-ts';
import { NAME } from './text.ts';

/** An organization to create. */
export const NEW_ORG = { type: 'object', additionalProperties: false, required: ['name'], properties: { name: NAME } } as const;

/** A user to add to an organization, or whose role to change. */
export const NEW_MEMBER = {
  type: 'object',
  additionalProperties: false,
  required: ['login'],
  properties: { login: NAME, role: { type: 'string', enum: ['owner', 'member'], default: 'member' } },
} as const;

/** A member's new role. */
export const MEMBER_ROLE = {
  type: 'object',
  additionalProperties: false,
  required: ['role'],
  properties: { role: { type: 'string', enum: ['owner', 'member'] } },
} as const;

export type NewOrg = FromSchema<typeof NEW_ORG>;
export type NewMember = FromSchema<typeof NEW_MEMBER>;
