import { gitPiped } from '../git/run.ts';

/** An LFS object named by a pointer. */
export interface LfsPointer {
  oid: string;
  size: number;
}

// The git-lfs spec keeps pointer files under 1024 bytes; the smallest valid one is
// about 120, so most small blobs are ruled out by size before being read.
const MIN_POINTER = 100;
const MAX_POINTER = 1024;

/**
 * Reads one blob as an LFS pointer (git-lfs spec v1: `version`, then `oid sha256:<hex>`
 * and `size <n>` among sorted keys); null when it is not one.
 */
export function parseLfsPointer(content: string): LfsPointer | null {
  if (!content.startsWith('version https://git-lfs.github.com/spec/v1\n') && !content.startsWith('version https://hawser.github.com/spec/v1\n')) return null;
  const oid = /^oid sha256:([0-9a-f]{64})$/m.exec(content);
  const size = /^size (\d{1,15})$/m.exec(content);
  if (!oid || !size) return null;
  return { oid: oid[1], size: Number(size[1]) };
}

/** Reads `<sha> <type> <size>` lines into the blobs whose size a pointer can have; counts the commits among them. */
function pointerSized(lines: string[], into: string[], seen: { commits: number }): void {
  for (const line of lines) {
    const [sha, type, size] = line.split(' ');
    const n = Number(size);
    if (type === 'blob' && n >= MIN_POINTER && n < MAX_POINTER) into.push(sha);
    else if (type === 'commit') seen.commits++;
  }
}

/** Reads the pointer-sized blobs `candidates` through one `cat-file --batch`, streamed: the LFS pointers among them, by oid, sorted. */
async function readPointers(dir: string, candidates: string[]): Promise<LfsPointer[]> {
  if (candidates.length === 0) return [];
  const found = new Map<string, LfsPointer>();
  let buffer = Buffer.alloc(0);
  await gitPiped(
    ['cat-file', '--batch'],
    candidates.join('\n') + '\n',
    (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      // Each answer: "<sha> blob <size>\n<content>\n".
      for (;;) {
        const eol = buffer.indexOf(10);
        if (eol < 0) return;
        const header = buffer.subarray(0, eol).toString();
        if (header.endsWith(' missing')) {
          buffer = buffer.subarray(eol + 1);
          continue;
        }
        const size = Number(header.split(' ')[2]);
        if (buffer.length < eol + 1 + size + 1) return;
        const pointer = parseLfsPointer(buffer.subarray(eol + 1, eol + 1 + size).toString('utf8'));
        if (pointer) found.set(pointer.oid, pointer);
        buffer = buffer.subarray(eol + 1 + size + 1);
      }
    },
    { cwd: dir },
  );
  return [...found.values()].sort((a, b) => a.oid.localeCompare(b.oid));
}

/** Runs a git command printing `<sha> <type> <size>` lines, streamed: the blobs whose size a pointer can have, and how many commits it listed. */
async function pointerSizedBlobs(dir: string, args: string[], stdin: string | null): Promise<{ candidates: string[]; commits: number }> {
  const candidates: string[] = [];
  const seen = { commits: 0 };
  let pending = '';
  await gitPiped(
    args,
    stdin,
    (chunk) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop()!;
      pointerSized(lines, candidates, seen);
    },
    { cwd: dir },
  );
  pointerSized([pending], candidates, seen);
  return { candidates, commits: seen.commits };
}

/**
 * Finds every LFS pointer in a freshly copied repository, and counts its commits, from one
 * listing of its objects. Every object in a clone came with the refs (the source sends
 * what they reach, and nothing else was ever written there), so all objects is all of
 * history and the commits are those the refs reach.
 */
export async function scanClonedObjects(dir: string): Promise<{ pointers: LfsPointer[]; commits: number }> {
  const args = ['cat-file', '--batch-all-objects', '--unordered', '--batch-check=%(objectname) %(objecttype) %(objectsize)'];
  const { candidates, commits } = await pointerSizedBlobs(dir, args, null);
  return { pointers: await readPointers(dir, candidates), commits };
}

/**
 * The LFS pointers among the objects `rev-list` reaches from `revisions` (e.g. `--branches
 * --tags`, or `--stdin` with tips and `^<id>` exclusions given as `stdin`). Blobs of 1 KiB
 * and more are left out by rev-list itself, so only commits, trees and small blobs are
 * listed, checked and read, each step one git process streamed into the next.
 */
export async function reachableLfsPointers(dir: string, revisions: string[], stdin: string | null = null): Promise<LfsPointer[]> {
  const objects: string[] = [];
  let pending = '';
  await gitPiped(
    ['rev-list', '--objects', '--no-object-names', `--filter=blob:limit=${MAX_POINTER - 1}`, ...revisions],
    stdin,
    (chunk) => {
      const lines = (pending + chunk.toString('latin1')).split('\n');
      pending = lines.pop()!;
      for (const l of lines) if (l) objects.push(l.replace(/^[?~]/, ''));
    },
    { cwd: dir },
  );
  if (pending) objects.push(pending);
  if (objects.length === 0) return [];
  const check = ['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'];
  return readPointers(dir, (await pointerSizedBlobs(dir, check, objects.join('\n') + '\n')).candidates);
}
