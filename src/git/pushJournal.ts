import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** One accepted ref update, as git reports it to post-receive. */
export interface RefUpdate {
  before: string;
  after: string;
  ref: string;
}

/**
 * The push journal: one file per landed push under `DATA_DIR/pushes`, written whole by
 * the post-receive hook (under a temporary name, then renamed) and made durable by the
 * route before the push's response ends. It holds the accepted ref updates and every
 * ref's value just after them, so the push's events can be built later, exactly as they
 * were at that moment, whatever other pushes did since. The push recorder removes a file
 * once its events are in the outbox; a file still there at start is a push whose events
 * a stopped process never recorded.
 *
 * The name says who pushed to which repository: `<ms>-<random>.r<repo>.u<user|x>.push`.
 */
export interface PushEntry {
  file: string;
  repositoryId: number;
  senderId: number | null;
}

/** A journaled push, as the hook wrote it. */
export interface LandedPush extends PushEntry {
  updates: RefUpdate[];
  /** Every ref just after the push (name → object); undefined when the hook could not list them. */
  refsAfter?: Map<string, string>;
  /** When the push landed: the time the hook wrote the entry. */
  landedAt: number;
}

/** Marks the end of a complete ref listing in a journal file. */
export const REFS_END = '.';

const ENTRY_NAME = /^\d+-[0-9a-f]+\.r(\d+)\.u(\d+|x)\.push$/;

export const journalDir = (dataDir: string) => path.join(dataDir, 'pushes');

/** Creates the journal directory (once, at start). */
export async function prepareJournal(dataDir: string): Promise<void> {
  await fsp.mkdir(journalDir(dataDir), { recursive: true });
}

/** The journal file a push will have if anything lands: its path is given to the hook. Nothing is written yet. */
export function newPushEntry(dataDir: string, repositoryId: number, senderId: number | null): PushEntry {
  const name = `${Date.now()}-${randomBytes(8).toString('hex')}.r${repositoryId}.u${senderId ?? 'x'}.push`;
  return { file: path.join(journalDir(dataDir), name), repositoryId, senderId };
}

/** Reads a push's journal file: its updates then, after a blank line, `<sha> <ref>` lines closed by REFS_END. */
export async function readPush(entry: PushEntry): Promise<LandedPush | null> {
  let text: string;
  let landedAt: number;
  try {
    text = await fsp.readFile(entry.file, 'utf8');
    landedAt = Math.floor((await fsp.stat(entry.file)).mtimeMs);
  } catch (err: any) {
    if (err?.code === 'ENOENT') return null; // nothing landed
    throw err;
  }
  const split = text.indexOf('\n\n');
  const updates = parsePushLog(split < 0 ? text : text.slice(0, split));
  const listing = split < 0 ? [] : text.slice(split + 2).split('\n');
  if (listing.at(-1) === '') listing.pop();
  if (listing.at(-1) !== REFS_END) return { ...entry, updates, landedAt };
  const refsAfter = new Map<string, string>();
  for (const line of listing.slice(0, -1)) {
    const space = line.indexOf(' ');
    if (space > 0) refsAfter.set(line.slice(space + 1), line.slice(0, space));
  }
  return { ...entry, updates, refsAfter, landedAt };
}

/** Flushes a journal file and its directory entry to disk, so the push survives a crash from here on. */
export async function sealPush(entry: PushEntry): Promise<void> {
  const file = await fsp.open(entry.file, 'r');
  try {
    await file.datasync();
  } finally {
    await file.close();
  }
  const dir = await fsp.open(path.dirname(entry.file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** Removes a push's journal file once its events are recorded. */
export async function removePush(entry: PushEntry): Promise<void> {
  await fsp.rm(entry.file, { force: true });
}

/** The entry a journal file name describes, or null for anything else (a hook's temporary file). */
export function entryFromPath(file: string): PushEntry | null {
  const m = ENTRY_NAME.exec(path.basename(file));
  if (!m) return null;
  return { file, repositoryId: Number(m[1]), senderId: m[2] === 'x' ? null : Number(m[2]) };
}

/** Every complete journal file, oldest first. */
export function journaledPushes(dataDir: string): PushEntry[] {
  let names: string[];
  try {
    names = fs.readdirSync(journalDir(dataDir));
  } catch {
    return [];
  }
  return names
    .sort()
    .map((name) => entryFromPath(path.join(journalDir(dataDir), name)))
    .filter((e): e is PushEntry => e !== null);
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
