import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { REFS_END } from './pushLog.ts';

/** The variable through which the smart-HTTP route tells the post-receive hook where to write. */
export const PUSH_LOG_VARIABLE = 'WHARF_PUSH_LOG';

// git feeds post-receive one "old new ref" line per accepted update on stdin. The hook
// writes them, a blank line, and every ref's value after the push closed by a "."
// line, to a temporary file it then renames to the push log path the route named
// (see pushLog.ts): the route reads exact updates and stores them in the database, and
// the push's events can be built later as the repository was at this moment. Without
// the ref listing (git could not list them) the events are built from the refs as they
// are then.
const POST_RECEIVE = `#!/bin/sh
# Written by Wharf at start; hand-edits are lost. Reports accepted ref updates to Wharf.
[ -n "$${PUSH_LOG_VARIABLE}" ] || exit 0
tmp="$${PUSH_LOG_VARIABLE}.tmp"
{
  cat
  echo
  git for-each-ref --format='%(objectname) %(refname)' && echo '${REFS_END}'
} > "$tmp" && mv "$tmp" "$${PUSH_LOG_VARIABLE}"
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
