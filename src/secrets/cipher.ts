import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Stored form: `v1:<key id>:<base64url of iv ‖ ciphertext ‖ tag>`. The key id (the first
// 4 bytes of SHA-256 over the key, in hex) names the key that sealed a value, so a wrong
// key is told apart from a damaged value, and a rotation leaves nothing sealed with the
// old key unnoticed. The purpose (`webhooks.secret`, …) is bound in as associated data:
// a value copied into another column does not open there.
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Raised when a stored value cannot be opened: another key sealed it, or it was altered. Internal: callers decide what it means (start-up check, a delivery's error). */
export class SecretOpenError extends Error {
  override name = 'SecretOpenError';
}

/** The short public name of a key, as written into every value it seals. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('wharf secret key id\0').update(key).digest('hex').slice(0, 8);
}

/** True when a stored value has the sealed form (any key). */
export function isSealed(stored: string): boolean {
  return /^v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/.test(stored);
}

/** The key id a sealed value names, or null for anything else. */
export function sealedKeyId(stored: string): string | null {
  return isSealed(stored) ? stored.slice(3, 11) : null;
}

/** Encrypts a secret with AES-256-GCM under a 32-byte key, for one purpose. */
export function seal(key: Buffer, purpose: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose, 'utf8'));
  const body = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}:${keyId(key)}:${body.toString('base64url')}`;
}

/** Decrypts a value sealed with `seal` for the same purpose; throws SecretOpenError otherwise. */
export function open(key: Buffer, purpose: string, stored: string): string {
  const id = sealedKeyId(stored);
  if (id === null) throw new SecretOpenError('not a sealed value');
  if (id !== keyId(key)) throw new SecretOpenError(`sealed with another key (${id}, not ${keyId(key)})`);
  const body = Buffer.from(stored.slice(12), 'base64url');
  if (body.length < IV_BYTES + TAG_BYTES) throw new SecretOpenError('sealed value too short');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretOpenError('the value does not open with this key (altered, or sealed for another purpose)');
  }
}
