import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { sealSecret } from '../secrets/box.ts';
import { openWithKnownKey } from '../secrets/keyring.ts';

// Webhook secrets are stored sealed (SPEC §7.8): written through sealWebhookSecret, read
// back only by the delivery signer through openWebhookSecret.
const PURPOSE = 'webhooks.secret';

/** The stored (sealed) form of a webhook secret. */
export function sealWebhookSecret(config: Pick<Config, 'secretKey'>, secret: string): string {
  return sealSecret(config, PURPOSE, secret);
}

/** A webhook secret from its stored form, opened with the loaded key that sealed it. */
export function openWebhookSecret(stored: string): string {
  return openWithKnownKey(PURPOSE, stored);
}

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
