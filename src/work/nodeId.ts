import os from 'node:os';
import { createHash, randomBytes } from 'node:crypto';

// One name for one running worker, written in the lease columns it claims with
// (deliveries.lease_owner, push_records.locked_by, import_jobs.locked_by):
//
//   <host>:<pid>:<data dir tag>:<random>
//
// The host and pid let a restart on the same host free the claims of a process that
// is gone (the import runner's sweep); the data dir tag (8 hex digits of a SHA-256 of
// DATA_DIR) lets a restarted node know its own claims (the push recorder's sweep); the
// random part tells apart two workers of one process. Host names hold no ':', so the
// fields split cleanly. The whole fits the narrowest lease column (64 characters): a
// host name too long is cut, the same way every time.

/** The narrowest column a node id is stored in (deliveries.lease_owner). */
const MAX_LENGTH = 64;

/** What a node id says about the worker that wrote it. */
export interface NodeIdParts {
  host: string;
  pid: number;
  dirTag: string;
}

const dirTag = (dataDir: string) => createHash('sha256').update(dataDir).digest('hex').slice(0, 8);

/** The host part of this machine's node ids (cut so that a whole id fits its column). */
function hostPart(tail: string): string {
  return os
    .hostname()
    .replace(/:/g, '_')
    .slice(0, MAX_LENGTH - tail.length - 1);
}

/** A fresh node id for a worker of this process on `dataDir` (see the format above). */
export function nodeId(dataDir: string): string {
  const tail = `${process.pid}:${dirTag(dataDir)}:${randomBytes(4).toString('hex')}`;
  return `${hostPart(tail)}:${tail}`;
}

/**
 * Reads a node id; null for anything else. Ids of earlier releases read too:
 * `<host>:<pid>:<random>` (dispatcher, import runner) gives no dirTag ('').
 */
export function parseNodeId(id: string): NodeIdParts | null {
  const parts = id.split(':');
  if (parts.length !== 3 && parts.length !== 4) return null;
  const pid = Number(parts[1]);
  if (!/^[0-9]+$/.test(parts[1]) || !Number.isSafeInteger(pid) || pid <= 0) return null;
  return { host: parts[0], pid, dirTag: parts.length === 4 ? parts[2] : '' };
}

/** The name an earlier release's push recorder claimed with (host and DATA_DIR): still read as this node's own. */
export function legacyPushNode(dataDir: string): string {
  return `${os.hostname()}:${dataDir}`.slice(-128);
}

/** Whether a process of this machine is running (a process we may not signal is running). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException)?.code === 'EPERM';
  }
}

/**
 * Whether `other` names a worker of this host whose process is gone, as seen by `self`:
 * another pid that no longer runs, or an earlier worker of this very process. With
 * `sameDataDir`, only a worker of the same DATA_DIR counts (the same node, restarted).
 */
export function isDeadPredecessor(other: string, self: string, options: { sameDataDir?: boolean } = {}): boolean {
  if (other === self) return false;
  const mine = parseNodeId(self);
  const theirs = parseNodeId(other);
  if (!mine || !theirs || theirs.host !== mine.host) return false;
  if (options.sameDataDir && theirs.dirTag !== mine.dirTag) return false;
  return theirs.pid === process.pid || !alive(theirs.pid);
}
