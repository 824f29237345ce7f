import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** The file under DATA_DIR that holds the key when SECRET_KEY is unset. */
export const KEY_FILE = 'secret.key';

/** Raised when the secret key is missing, malformed or not the one the database was sealed with. Stops start-up; never reaches a request. */
export class SecretKeyError extends Error {
  override name = 'SecretKeyError';
}

/** A 32-byte key from its 64-hex-character form, or null when the text is not one. */
export function parseKey(text: string): Buffer | null {
  const hex = text.trim();
  return /^[0-9a-fA-F]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}

/** A new random 32-byte key. */
export function generateKey(): Buffer {
  return randomBytes(32);
}

/** The path of the key file of a data directory. */
export function keyFilePath(dataDir: string): string {
  return path.join(dataDir, KEY_FILE);
}

/** Reads the key file of a data directory: the key, or null when there is no file. */
export async function readKeyFile(dataDir: string): Promise<Buffer | null> {
  const file = keyFilePath(dataDir);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SecretKeyError(`SECRET_KEY is unset and ${file} cannot be read: ${(err as Error).message}`);
  }
  const key = parseKey(text);
  if (!key) throw new SecretKeyError(`SECRET_KEY is unset and ${file} does not hold 64 hexadecimal characters`);
  return key;
}

/**
 * Writes a new key file (mode 0600) unless one exists; returns the key the file holds
 * afterwards, so two processes starting at once on one DATA_DIR end up with the same key.
 */
export async function createKeyFile(dataDir: string, key: Buffer): Promise<Buffer> {
  await fs.mkdir(dataDir, { recursive: true });
  try {
    await fs.writeFile(keyFilePath(dataDir), `${key.toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return (await readKeyFile(dataDir))!;
  }
}

/** Where a rotation puts the new key before its transaction commits. */
export function stagedKeyFilePath(dataDir: string): string {
  return `${keyFilePath(dataDir)}.new`;
}

/**
 * Writes a new key beside the key file (mode 0600, synced) before the database is
 * re-sealed with it: a crash after the commit still leaves the new key on disk.
 */
export async function stageKeyFile(dataDir: string, key: Buffer): Promise<void> {
  const next = stagedKeyFilePath(dataDir);
  await fs.rm(next, { force: true });
  const handle = await fs.open(next, 'wx', 0o600);
  try {
    await handle.writeFile(`${key.toString('hex')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Moves the staged key over the key file, in one rename: the file holds one whole key at every moment. */
export async function commitKeyFile(dataDir: string): Promise<void> {
  await fs.rename(stagedKeyFilePath(dataDir), keyFilePath(dataDir));
}

/** Removes a staged key that was not used (its transaction failed). */
export async function discardStagedKeyFile(dataDir: string): Promise<void> {
  await fs.rm(stagedKeyFilePath(dataDir), { force: true });
}
