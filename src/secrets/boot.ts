import fs from 'node:fs';
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import { keyId } from './cipher.ts';
import { keyMismatch, sealLegacyValues, storedKeyId } from './check.ts';
import { createKeyFile, generateKey, keyFilePath, readKeyFile, SecretKeyError, stagedKeyFilePath } from './key.ts';
import { rememberKey } from './keyring.ts';

/** The key a process runs with and where it came from. */
export interface LoadedKey {
  key: Buffer;
  /** True when SECRET_KEY is unset and the key lives in `DATA_DIR/secret.key`. */
  inDataDir: boolean;
}

/**
 * Finds the key: SECRET_KEY, else `DATA_DIR/secret.key`, else (on a database that has
 * sealed nothing yet, and when `generate` allows) a new key written to that file.
 */
export async function loadKey(config: Config, db: Knex, generate: boolean): Promise<LoadedKey> {
  if (config.secretKey) return { key: config.secretKey, inDataDir: false };
  const file = keyFilePath(config.dataDir);
  const fromFile = await readKeyFile(config.dataDir);
  if (fromFile) return { key: fromFile, inDataDir: true };
  const sealedWith = await storedKeyId(db);
  // A second node of a shared database must be given the first one's key, not make its own.
  if (sealedWith || !generate) {
    throw new SecretKeyError(
      `SECRET_KEY is unset and ${file} does not exist${sealedWith ? `, but this database's secrets are sealed with key id ${sealedWith}: set SECRET_KEY to the key the other nodes use` : ''}`,
    );
  }
  return { key: await createKeyFile(config.dataDir, generateKey()), inDataDir: true };
}

/** Refuses a key that does not open the database's secrets, with one line naming SECRET_KEY. */
export async function checkKey(config: Config, db: Knex, loaded: LoadedKey): Promise<void> {
  const other = await keyMismatch(db, loaded.key);
  if (other === null) return;
  const from = loaded.inDataDir ? `SECRET_KEY is unset and the key in ${keyFilePath(config.dataDir)}` : 'SECRET_KEY';
  const staged =
    loaded.inDataDir && fs.existsSync(stagedKeyFilePath(config.dataDir))
      ? ` (${stagedKeyFilePath(config.dataDir)} exists: a key rotation stopped before replacing the key file; move it over ${keyFilePath(config.dataDir)})`
      : '';
  throw new SecretKeyError(
    `${from} (key id ${keyId(loaded.key)}) does not open the secrets stored in this database (sealed with key id ${other}); give every node the same SECRET_KEY${staged}`,
  );
}

/**
 * Start-up for secrets, after migrations: loads or generates the key, refuses a wrong
 * one, seals values stored before sealing existed, and returns the configuration with
 * the key filled in (what every part that seals or opens a secret is given).
 */
export async function openSecrets(config: Config, db: Knex): Promise<Config> {
  const loaded = await loadKey(config, db, true);
  await checkKey(config, db, loaded);
  rememberKey(loaded.key);
  await sealLegacyValues(db, loaded.key);
  return { ...config, secretKey: loaded.key };
}
