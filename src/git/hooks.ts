import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** The variable through which the smart-HTTP route tells the post-receive hook where to write. */
export const PUSH_LOG_VARIABLE = 'WHARF_PUSH_LOG';

/** One accepted ref update, as git reports it to post-receive. */
export interface RefUpdate {
  before: string;
  after: string;
  ref: string;
}

// git feeds post-receive one "old new ref" line per accepted update on stdin; the hook
// only appends them to the file the route named, so the route reads exact updates.
const POST_RECEIVE = `#!/bin/sh
# Written by Wharf at start; hand-edits are lost. Reports accepted ref updates.
[ -n "$${PUSH_LOG_VARIABLE}" ] || exit 0
exec cat >> "$${PUSH_LOG_VARIABLE}"
`;

/**
 * Writes Wharf's hooks directory (only post-receive) and returns its path. The route runs
 * git with core.hooksPath set to it on the command line, which overrides any repository's
 * own setting, so no repository ever runs a hook of its own.
 */
export async function writeHooksDir(dataDir: string): Promise<string> {
  const dir = path.join(dataDir, 'git-hooks');
  await fs.mkdir(dir, { recursive: true });
  // Written under a temporary name and renamed so a concurrent push never sees half a script.
  const tmp = path.join(dir, `.post-receive.${randomBytes(4).toString('hex')}`);
  await fs.writeFile(tmp, POST_RECEIVE, { mode: 0o755 });
  await fs.rename(tmp, path.join(dir, 'post-receive'));
  return dir;
}

/** Parses post-receive lines ("old new ref"); ref names cannot contain spaces. */
export function parsePushLog(text: string): RefUpdate[] {
  const updates: RefUpdate[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (\S+)$/.exec(line);
    if (m) updates.push({ before: m[1], after: m[2], ref: m[3] });
  }
  return updates;
}
