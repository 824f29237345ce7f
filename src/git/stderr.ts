/**
 * The one reader of git's stderr. git reports why a run failed only as text, so the
 * patterns live here, each checked against stderr captured from real git runs
 * (test/git/stderr.test.ts); everything else classifies failures by these kinds.
 */

/** Why a git run failed, as far as its stderr tells. */
export type GitFailureKind =
  /** curl's low-speed limit or timeout gave up on the transfer. */
  | 'stalled'
  /** The server answered with a redirect, which Wharf never follows. */
  | 'redirect'
  /** The server refused or asked for credentials (401, askpass gave none that worked). */
  | 'auth_failed'
  /** Nothing answered at the source's address (connection refused, no route, unknown host). */
  | 'unreachable'
  /** The server refused access (403). */
  | 'forbidden'
  /** No repository at that address (404, not exported, not a git repository). */
  | 'not_found'
  /** Objects failed the fsck checks (transfer.fsckObjects / index-pack --strict). */
  | 'fsck_failed'
  /** http-backend refused a request body over its buffer (http.maxRequestBuffer). */
  | 'too_large'
  /** The connection broke off mid-transfer (early EOF, hung up, reset, RPC failed). */
  | 'connection_broken'
  /** Anything else. */
  | 'failed';

/** What git's stderr says: the kind, and the line that says it (without `error: ` for fsck lines). */
export interface GitStderr {
  kind: GitFailureKind;
  line: string;
}

// git's own progress meters, which say nothing about a failure.
const PROGRESS = /^(remote: )?(Enumerating|Counting|Compressing|Receiving|Resolving) /;

const KINDS: [GitFailureKind, RegExp][] = [
  ['stalled', /Operation too slow|Operation timed out/i],
  ['too_large', /request was larger than our maximum size/],
  ['redirect', /returned error: 30\d|redirect/i],
  ['auth_failed', /returned error: 401|Authentication failed|could not read (Username|Password)/i],
  ['forbidden', /returned error: 403/],
  ['unreachable', /unable to connect to|Failed to connect to|Could not resolve host|unable to look up|Couldn't connect to server|No route to host/i],
  ['not_found', /returned error: 404|not found|does not appear to be a git repository|access denied|no such repository/i],
];

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

/** The meaningful lines of a stderr: trimmed, without blanks and progress meters. */
export function stderrLines(stderr: string): string[] {
  return stderr
    .split(/[\r\n]+/)
    .map((l) => l.trim())
    .filter((l) => l && !PROGRESS.test(l));
}

/** Classifies a failed git run by its stderr. */
export function readGitStderr(stderr: string): GitStderr {
  const lines = stderrLines(stderr);
  const text = lines.join('\n');
  const last = lines.filter((l) => /^(fatal|error):/.test(l)).pop() ?? lines[lines.length - 1] ?? 'git failed';
  for (const [kind, re] of KINDS) {
    if (re.test(text)) return { kind, line: lines.find((l) => re.test(l)) ?? last };
  }
  // index-pack --strict reports each failed check as "error: object <id>: <msgId>: <text>".
  const fsck = lines.find((l) => /^error: object [0-9a-f]+: \w+:/.test(l)) ?? lines.find((l) => /fsck error/.test(l));
  if (fsck) return { kind: 'fsck_failed', line: fsck.replace(/^error:\s*/, '') };
  return { kind: BROKEN.some((re) => re.test(text)) ? 'connection_broken' : 'failed', line: last };
}
