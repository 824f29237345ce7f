import type { Credentials } from './url.ts';

/** Why a git run against the source failed, in words safe to show. */
export interface GitFailure {
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

const BROKEN = [
  /early EOF/i,
  /the remote end hung up unexpectedly/i,
  /RPC failed/i,
  /connection reset/i,
  /transfer closed with outstanding read data/i,
  /unexpected disconnect/i,
  /index-pack failed/i,
  /fetch-pack: invalid index-pack output/i,
];

/**
 * Classifies git's stderr after a failed run against a source. This is the one place
 * that reads git's messages: git reports these conditions only as text.
 */
export function describeGitFailure(stderr: string, credentials: Credentials | null): GitFailure {
  const lines = scrubSecrets(stderr, credentials)
    .split(/[\r\n]+/)
    .map((l) => l.trim())
    .filter((l) => l && !/^(remote: )?(Enumerating|Counting|Compressing|Receiving|Resolving) /.test(l));
  const text = lines.join('\n');
  if (/returned error: 30\d/.test(text) || /redirect/i.test(text)) {
    return { message: 'the source answered with a redirect; redirects are not followed (IMPORT_ALLOWED_HOSTS host policy)', broken: false };
  }
  if (/returned error: 401|Authentication failed|could not read (Username|Password)/i.test(text)) {
    return { message: 'the source refused the credentials (authentication failed)', broken: false };
  }
  if (/returned error: 403/.test(text)) return { message: 'the source refused access (403)', broken: false };
  if (/returned error: 404|not found|does not appear to be a git repository|access denied|no such repository/i.test(text)) {
    return { message: 'no Git repository found at the source URL', broken: false };
  }
  // index-pack --strict reports each failed check as "error: object <id>: <msgId>: <text>".
  const fsck = lines.find((l) => /^error: object [0-9a-f]+: \w+:/.test(l)) ?? lines.find((l) => /fsck error/.test(l));
  if (fsck) {
    return { message: `the source's objects fail Wharf's integrity checks (fsck, as for a push): ${fsck.replace(/^error:\s*/, '').slice(0, 500)}`, broken: false };
  }
  const fatal = lines.filter((l) => /^(fatal|error):/.test(l)).pop() ?? lines.pop() ?? 'git failed';
  return { message: fatal.slice(0, 1000), broken: BROKEN.some((re) => re.test(text)) };
}
