import { open, sealedKeyId, keyId, SecretOpenError } from './cipher.ts';

// The keys this process has loaded, by key id. Parts that get only a stored value (the
// delivery signer) open it with the key the value names. Keys are only ever added: a
// process that runs several Wharfs (tests) keeps each one's key apart by its id.
const keys = new Map<string, Buffer>();

/** Makes a key known to this process (done at start-up, once the key is checked). */
export function rememberKey(key: Buffer): void {
  keys.set(keyId(key), key);
}

/** Opens a sealed value with whichever loaded key sealed it; throws SecretOpenError when none did. */
export function openWithKnownKey(purpose: string, stored: string): string {
  const id = sealedKeyId(stored);
  const key = id === null ? undefined : keys.get(id);
  if (key === undefined) throw new SecretOpenError(id === null ? 'not a sealed value' : `no loaded key has id ${id}`);
  return open(key, purpose, stored);
}
