/** A full commit sha (SHA-1 or SHA-256), lower case. */
export const SHA = { type: 'string', pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' } as const;
