import { randomBytes } from 'node:crypto';

/** A new secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The key bytes of a Standard Webhooks secret (`whsec_<base64>`), or null for any other
 * secret: only such secrets get the `webhook-*` headers, as receivers decode them that way.
 */
export function standardWebhooksKey(secret: string): Buffer | null {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  if (!m) return null;
  const key = Buffer.from(m[1], 'base64');
  return key.length > 0 ? key : null;
}
