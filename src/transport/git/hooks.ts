import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { REFS_END, TIPS_SUFFIX, WALK_SUFFIX } from '../../pushes/log.ts';
import { GITMODULES_LOG, hookCheckProgram, URL_CONFIG } from '../../git/gitmodules.ts';

/** The variable through which the smart-HTTP route tells the post-receive hook where to write. */
export const PUSH_LOG_VARIABLE = 'WHARF_PUSH_LOG';

// git feeds post-receive one "old new ref" line per accepted update on stdin. The hook
// writes them, a blank line, and every ref's value after the push closed by a "."
// line, to a temporary file it then renames to the push log path the route named
// (see pushes/log.ts): the route reads exact updates and stores them in the database, and
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
 * Set by the route for a push to a pull mirror (SPEC §8.1.1): the source URL (no
 * credentials) and the cutover's address. The pre-receive hook then refuses the whole
 * push, naming them, before any ref moves (the pushed objects stay in git's quarantine,
 * which is dropped).
 */
export const MIRROR_OF_VARIABLE = 'WHARF_MIRROR_OF';
export const MIRROR_CUTOVER_VARIABLE = 'WHARF_MIRROR_CUTOVER';

/** The longest ref a push may create or move, in bytes: events.ref holds 1,024 characters. */
export const MAX_REF_BYTES = 1024;

const CHECK_PROGRAM = 'gitmodules-check.cjs';
const ALTERNATE_REFS = 'alternate-refs';
const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/** The backend's `core.alternateRefsCommand` (transport/git/cgi.ts): the alternate-refs script, quoted for the shell git runs it with. */
export const alternateRefsCommand = (hooksDir: string) => quote(path.join(hooksDir, ALTERNATE_REFS));

// receive-pack's connectivity check lists the refs of the repository's alternates when it
// starts, right after the pack is indexed, and inside the push's quarantine the repository
// itself is one: git runs core.alternateRefsCommand with its path. The script prints what
// git's own listing would, and first, for a push whose tips the route wrote (pushTips.ts),
// starts the pre-receive hook's two slow steps in the background, so they run beside the
// check instead of after it: the .gitmodules walk on the other core (33 ms of a 53 MB push,
// 237 ms of a mirror push of 5,000 refs) and the writing of the pack to disk. Its lock is
// taken before the script returns and held by that job until it has written both results,
// so the hook, which takes the lock in turn, never reads half of them. Anything missing (no
// tips yet, no flock, a walk or a sync that failed) leaves the hook to do that step itself.
function alternateRefs(): string {
  return `#!/bin/sh
# Written by Wharf at start; hand-edits are lost. Lists an alternate's refs; in a push's quarantine, starts its .gitmodules walk and the writing of its pack to disk.
export LC_ALL=C
ALTERNATE=$1
w="$${PUSH_LOG_VARIABLE}${WALK_SUFFIX}"
# Only for the repository pushed to (its quarantine is inside it), never another alternate it may have.
case "$GIT_QUARANTINE_PATH" in "$ALTERNATE"/objects/* | "$ALTERNATE"/./objects/*) inside=1 ;; *) inside= ;; esac
if [ -n "$inside" ] && [ -n "$${PUSH_LOG_VARIABLE}" ] && [ -s "$${PUSH_LOG_VARIABLE}${TIPS_SUFFIX}" ] && mkdir "$w" 2>/dev/null && true 2>/dev/null >"$w/lock"; then
  exec 9>"$w/lock"
  if flock 9 2>/dev/null && cp "$${PUSH_LOG_VARIABLE}${TIPS_SUFFIX}" "$w/tips"; then
    {
      synced=
      set -- "$GIT_QUARANTINE_PATH"/pack/*
      if [ -e "$1" ]; then sync -- "$@" & synced=$!; fi
      GIT_DIR="$ALTERNATE" GIT_OBJECT_DIRECTORY="$GIT_QUARANTINE_PATH" GIT_ALTERNATE_OBJECT_DIRECTORIES="$ALTERNATE/objects" git ${GITMODULES_LOG.map(quote).join(' ')} <"$w/tips" >"$w/out" 2>"$w/err"
      echo $? >"$w/status"
      if [ -z "$synced" ] || wait "$synced"; then echo 0 >"$w/synced"; fi
    } </dev/null >/dev/null 2>&1 &
  fi
  exec 9>&-
fi
exec git --git-dir="$ALTERNATE" for-each-ref --format='%(objectname)'
`;
}

// Refuses a push naming a ref longer than MAX_REF_BYTES (its events could never be
// recorded), and one whose new commits name a .gitmodules blob with a URL that runs
// commands (SPEC §7.6, gitmodules.ts). It runs inside git's quarantine, before any ref
// moves; what it prints on stderr git shows the pusher as "remote:" lines. Only the new
// commits are read (--not --all) and one git log keeps their .gitmodules entries alone,
// so a push without .gitmodules changes costs one short git run and no node. A git log that
// fails refuses the push: the check never lets through what it could not read. One awk reads
// the updates (the refs too long, else the new ids: all but deletions, whose new id is all
// zeros; a shell read loop costs ~25 µs a line, 125 ms of a mirror push of 5,000 refs) and
// one more picks the regular-file blobs out of the diff: every process the hook starts
// costs about a millisecond of the push.
// The backend's git writes the pushed pack without fsync (core.fsync=none, cgi.ts): the hook
// accepts the push only once the quarantine's packs and their indexes are on disk (git's own
// fsync of them would have waited after indexing, before the connectivity check and this
// hook: about 30 ms of a 53 MB push).
// The walk and the sync are usually done already, beside the connectivity check, by the
// alternate-refs script above: the hook waits for its lock and takes the walk's output only
// when that walk read exactly the new ids the hook reads on its stdin, and the sync only when
// it succeeded; otherwise it runs them itself, the sync in the background while it checks.
function preReceive(dir: string): string {
  return `#!/bin/sh
# Written by Wharf at start; hand-edits are lost. Refuses pushes to mirrors, refs over ${MAX_REF_BYTES} bytes and .gitmodules URLs that run commands.
export LC_ALL=C
if [ -n "$${MIRROR_OF_VARIABLE}" ]; then
  printf 'This repository is a mirror of %s; push there, or stop mirroring with %s\n' "$${MIRROR_OF_VARIABLE}" "$${MIRROR_CUTOVER_VARIABLE}" >&2
  exit 1
fi
w="$${PUSH_LOG_VARIABLE}${WALK_SUFFIX}"
early=
if [ -n "$${PUSH_LOG_VARIABLE}" ] && [ -d "$w" ] && flock "$w/lock" true 2>/dev/null; then early=1; fi
synced=
if [ -z "$early" ] || [ "$(cat "$w/synced" 2>/dev/null)" != 0 ]; then
  set -- "$GIT_QUARANTINE_PATH"/pack/*
  if [ -n "$GIT_QUARANTINE_PATH" ] && [ -e "$1" ]; then sync -- "$@" </dev/null & synced=$!; fi
fi
accept() {
  if [ -n "$synced" ] && ! wait "$synced"; then
    echo "Wharf could not write the pushed objects to disk (above); nothing was changed. Try again, or ask the administrator." >&2
    exit 1
  fi
  exit 0
}
new=$(awk 'length($3) > ${MAX_REF_BYTES} { long = long "  " substr($3, 1, 72) "... (" length($3) " bytes)\\n" }
  $2 ~ /[^0]/ { print $2 }
  END { if (long != "") { printf "Wharf: ref names longer than ${MAX_REF_BYTES} bytes are refused (their events could not be recorded):\\n%s", long > "/dev/stderr"; exit 1 } }') || exit 1
[ -n "$new" ] || accept
if [ -n "$early" ] && [ "$(cat "$w/status" 2>/dev/null)" = 0 ] && [ "$(cat "$w/tips")" = "$new" ]; then
  changed=$(cat "$w/out") || exit 1
else
  changed=$(echo "$new" | git ${GITMODULES_LOG.map(quote).join(' ')}) || {
    echo "Wharf could not check the pushed commits' .gitmodules (git log failed, above); nothing was changed. Try again, or ask the administrator." >&2
    exit 1
  }
fi
[ -n "$changed" ] || accept
blobs=$(printf '%s\\n' "$changed" | awk '$2 ~ /^100/ && !seen[$4]++ { print $4 }')
[ -n "$blobs" ] || accept
for b in $blobs; do
  printf 'blob %s\\0' "$b"
  git ${[URL_CONFIG[0], '--blob', '"$b"', ...URL_CONFIG.slice(1).map(quote)].join(' ')}
done | ${quote(process.execPath)} ${quote(path.join(dir, CHECK_PROGRAM))} || exit 1
accept
`;
}

/** Writes a file under a temporary name and renames it, so a concurrent push never sees half of it. */
async function writeAtomically(file: string, text: string, mode: number): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}`);
  await fs.writeFile(tmp, text, { mode });
  await fs.rename(tmp, file);
}

/**
 * Writes Wharf's hooks directory (post-receive, pre-receive, its check program and the
 * alternate-refs script) and returns its path. The route runs
 * git with core.hooksPath set to it on the command line, which overrides any repository's
 * own setting, so no repository ever runs a hook of its own.
 */
export async function writeHooksDir(dataDir: string): Promise<string> {
  const dir = path.join(dataDir, 'git-hooks');
  await fs.mkdir(dir, { recursive: true });
  await writeAtomically(path.join(dir, 'post-receive'), POST_RECEIVE, 0o755);
  await writeAtomically(path.join(dir, CHECK_PROGRAM), hookCheckProgram(), 0o644);
  await writeAtomically(path.join(dir, ALTERNATE_REFS), alternateRefs(), 0o755);
  await writeAtomically(path.join(dir, 'pre-receive'), preReceive(dir), 0o755);
  return dir;
}
