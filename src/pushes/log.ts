import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { errorCode } from '../errors/thrown.ts';
import type { RefUpdate } from '../git/refUpdate.ts';

/** A landed push as the post-receive hook reported it. */
export interface PushLog {
  updates: RefUpdate[];
  /** Every ref just after the push (name → object); undefined when the hook could not list them. */
  refsAfter?: Map<string, string>;
  /** When the push landed: the time the hook wrote its report. */
  landedAt: number;
}

/** Marks the end of a complete ref listing in a push log. */
export const REFS_END = '.';

/**
 * The push log is only the hand-over from the post-receive hook to the smart-HTTP route
 * of the same request: a file under `DATA_DIR/push-logs` that the route's landPush
 * (land.ts) reads and removes once the push record is in the database. Nothing is
 * promised while it is on disk (the push's answer has not ended), so it is never flushed.
 */
export const pushLogDir = (dataDir: string) => path.join(dataDir, 'push-logs');

/** Beside a push's log: the new ids of its commands, written by the route as they stream in (transport/git/pushTips.ts). */
export const TIPS_SUFFIX = '.tips';
/** Beside a push's log: the early `.gitmodules` walk's folder (its tips, output, status and lock; transport/git/hooks.ts). */
export const WALK_SUFFIX = '.walk';
export const pushTipsFile = (pushLog: string) => pushLog + TIPS_SUFFIX;
export const pushWalkDir = (pushLog: string) => pushLog + WALK_SUFFIX;

/** What a push's route and hooks leave beside its log (the tips file, its temporary name, the walk); a push in hand removes its own. */
const besideLogs = (name: string) => [TIPS_SUFFIX, `${TIPS_SUFFIX}.tmp`, WALK_SUFFIX].some((suffix) => name.endsWith(suffix));

/** Creates the hand-over directory (once, at start) and clears what pushes of an earlier run left beside their logs. */
export async function preparePushLogs(dataDir: string): Promise<void> {
  const dir = pushLogDir(dataDir);
  await fsp.mkdir(dir, { recursive: true });
  for (const name of await fsp.readdir(dir)) if (besideLogs(name)) await fsp.rm(path.join(dir, name), { recursive: true, force: true });
}

/** A fresh path for one push's log; nothing is written yet. */
export function newPushLog(dataDir: string): string {
  return path.join(pushLogDir(dataDir), `${Date.now()}-${randomBytes(8).toString('hex')}.push`);
}

/** Reads a push log: git's update lines, then after a blank line `<sha> <ref>` lines closed by REFS_END; null when nothing landed. */
export async function readPushLog(file: string): Promise<PushLog | null> {
  let text: string;
  let landedAt: number;
  try {
    text = await fsp.readFile(file, 'utf8');
    landedAt = Math.floor((await fsp.stat(file)).mtimeMs);
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return null; // nothing landed
    throw err;
  }
  const split = text.indexOf('\n\n');
  const updates = parseUpdates(split < 0 ? text : text.slice(0, split));
  const listing = split < 0 ? '' : text.slice(split + 2);
  return { updates, refsAfter: parseRefListing(listing), landedAt };
}

/** Parses `<sha> <ref>` lines closed by REFS_END; undefined when the listing is incomplete. */
export function parseRefListing(text: string): Map<string, string> | undefined {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.at(-1) !== REFS_END) return undefined;
  const refs = new Map<string, string>();
  for (const line of lines.slice(0, -1)) {
    const space = line.indexOf(' ');
    if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
  }
  return refs;
}

/** Parses post-receive lines ("old new ref"); ref names cannot contain spaces. */
export function parseUpdates(text: string): RefUpdate[] {
  const updates: RefUpdate[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (\S+)$/.exec(line);
    if (m) updates.push({ before: m[1], after: m[2], ref: m[3] });
  }
  return updates;
}

/** Removes a push log once its push record is committed (or nothing landed). */
export async function removePushLog(file: string): Promise<void> {
  await fsp.rm(file, { force: true });
}

/** A push journaled by an older Wharf under `DATA_DIR/pushes` and never recorded. */
export interface LegacyPush extends PushLog {
  file: string;
  repositoryId: number;
  senderId: number | null;
}

/** Journal files an older Wharf left under `DATA_DIR/pushes` (read once at start, as an upgrade), oldest first. */
export async function legacyPushes(dataDir: string): Promise<LegacyPush[]> {
  const dir = path.join(dataDir, 'pushes');
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
  const found: LegacyPush[] = [];
  for (const name of names) {
    const m = /^\d+-[0-9a-f]+\.r(\d+)\.u(\d+|x)\.push$/.exec(name);
    const log = m && (await readPushLog(path.join(dir, name)));
    if (m && log) found.push({ ...log, file: path.join(dir, name), repositoryId: Number(m[1]), senderId: m[2] === 'x' ? null : Number(m[2]) });
  }
  return found;
}
