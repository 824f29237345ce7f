import type { Config } from '../config.ts';
import { openSecret, sealSecret } from './box.ts';

// Import (and mirror) credentials are stored sealed, as JSON {username, password}.
const PURPOSE = 'import_jobs.credentials';

/** A user name and password for a source. */
export interface SourceCredentials {
  username: string;
  password: string;
}

/** The stored (sealed) form of a source's credentials. */
export function sealCredentials(config: Pick<Config, 'secretKey'>, credentials: SourceCredentials): string {
  return sealSecret(config, PURPOSE, JSON.stringify(credentials));
}

/** A source's credentials from their stored (sealed) form. */
export function openCredentials(config: Pick<Config, 'secretKey'>, stored: string): SourceCredentials {
  return JSON.parse(openSecret(config, PURPOSE, stored));
}
