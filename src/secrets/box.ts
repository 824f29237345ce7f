import type { Config } from '../config.ts';
import { open, seal } from './cipher.ts';

function keyOf(config: Pick<Config, 'secretKey'>): Buffer {
  // Start-up (openSecrets) fills the key in; a configuration without one never came through it.
  if (!config.secretKey) throw new Error('no secret key loaded: the configuration did not go through start-up (openSecrets)');
  return config.secretKey;
}

/** Seals a secret for storage with the process's key (AES-256-GCM), for one purpose (a column). */
export function sealSecret(config: Pick<Config, 'secretKey'>, purpose: string, plaintext: string): string {
  return seal(keyOf(config), purpose, plaintext);
}

/** Opens a stored secret sealed by sealSecret for the same purpose; throws SecretOpenError otherwise. */
export function openSecret(config: Pick<Config, 'secretKey'>, purpose: string, stored: string): string {
  return open(keyOf(config), purpose, stored);
}
