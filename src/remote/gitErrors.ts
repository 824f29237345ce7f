import type { Credentials } from './url.ts';
import { readGitStderr, type GitFailureKind } from '../git/stderr.ts';

/** Why a git run against the source failed, in words safe to show. */
export interface GitFailure {
  /** What git's stderr said, as git/stderr.ts reads it (or `failed` for failures of Wharf's own making). */
  kind: GitFailureKind;
  message: string;
  /** The connection broke off mid-transfer: worth another attempt that keeps what arrived. */
  broken: boolean;
}

/**
 * Removes every form a credential could take in a piece of text: URL user info,
 * the password as given, URL-encoded, and inside a Basic authorization value.
 */
export function scrubSecrets(text: string, credentials: Credentials | null): string {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"]*@/gi, '$1');
  out = out.replace(/(authorization:\s*(basic|bearer)\s+)\S+/gi, '$1[redacted]');
  if (credentials) {
    const basic = Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64');
    for (const secret of [credentials.password, encodeURIComponent(credentials.password), basic]) {
      if (secret.length >= 1) out = out.split(secret).join('[redacted]');
    }
  }
  return out;
}

const MESSAGES: Partial<Record<GitFailureKind, string>> = {
  redirect: 'the source answered with a redirect; redirects are not followed (IMPORT_ALLOWED_HOSTS host policy)',
  auth_failed: 'the source refused the credentials (authentication failed)',
  forbidden: 'the source refused access (403)',
  not_found: 'no Git repository found at the source URL',
};

/**
 * Describes a failed git run against a source in words safe to show: git's stderr is
 * scrubbed of credentials, then classified by the one reader of git's stderr (git/stderr.ts).
 */
export function describeGitFailure(stderr: string, credentials: Credentials | null): GitFailure {
  const { kind, line } = readGitStderr(scrubSecrets(stderr, credentials));
  const known = MESSAGES[kind];
  if (known) return { kind, message: known, broken: false };
  if (kind === 'fsck_failed') {
    return { kind, message: `the source's objects fail Wharf's integrity checks (fsck, as for a push): ${line.slice(0, 500)}`, broken: false };
  }
  return { kind, message: line.slice(0, 1000), broken: kind === 'connection_broken' };
}
