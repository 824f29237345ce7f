import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parsePushLog, type RefUpdate } from './hooks.ts';

/**
 * One push on disk: `<id>.json` says who pushes to which repository and is written
 * before git runs; `<id>.log` is what the post-receive hook appends. Both are removed
 * once the push's events are in the outbox, so a pair left behind is a push whose
 * events a stopped process never recorded: the next start records them.
 */
export interface PushEntry {
  log: string;
  meta: string;
  repositoryId: number;
  senderId: number | null;
}

const journalDir = (dataDir: string) => path.join(dataDir, 'pushes');

/** Writes a push's entry before git runs; its `log` is the path to give the hook. */
export async function openPush(dataDir: string, repositoryId: number, senderId: number | null): Promise<PushEntry> {
  const dir = journalDir(dataDir);
  await fsp.mkdir(dir, { recursive: true });
  const base = path.join(dir, `${Date.now()}-${randomBytes(8).toString('hex')}`);
  const entry = { log: `${base}.log`, meta: `${base}.json`, repositoryId, senderId };
  await fsp.writeFile(entry.meta, JSON.stringify({ repositoryId, senderId }));
  return entry;
}

/** The ref updates the hook logged for a push; none when nothing landed. */
export async function readUpdates(entry: PushEntry): Promise<RefUpdate[]> {
  try {
    return parsePushLog(await fsp.readFile(entry.log, 'utf8'));
  } catch (err: any) {
    if (err?.code === 'ENOENT') return [];
    throw err;
  }
}

/** Removes a push's entry once its events are recorded (or it had none). */
export async function closePush(entry: PushEntry): Promise<void> {
  await fsp.rm(entry.log, { force: true });
  await fsp.rm(entry.meta, { force: true });
}

/**
 * Entries left by a process that stopped mid-push. Read synchronously, at start and before
 * the server takes requests, so a push that is running now is never mistaken for one.
 */
export function leftoverPushes(dataDir: string): PushEntry[] {
  let names: string[];
  try {
    names = fs.readdirSync(journalDir(dataDir));
  } catch {
    return [];
  }
  const entries: PushEntry[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const meta = path.join(journalDir(dataDir), name);
    try {
      const { repositoryId, senderId } = JSON.parse(fs.readFileSync(meta, 'utf8'));
      entries.push({ meta, log: meta.replace(/\.json$/, '.log'), repositoryId: Number(repositoryId), senderId: senderId === null ? null : Number(senderId) });
    } catch {
      // A meta file cut short by the crash: the push never reached git, so nothing was lost.
      entries.push({ meta, log: meta.replace(/\.json$/, '.log'), repositoryId: 0, senderId: null });
    }
  }
  return entries;
}
