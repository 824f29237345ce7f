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

/**
 * Finds every LFS pointer in a freshly copied repository. Every object in it came with
 * the refs (nothing else was ever written there), so all objects is all of history.
 */
export async function findLfsPointers(dir: string): Promise<LfsPointer[]> {
  const candidates: string[] = [];
  let pending = '';
  await gitPiped(
    ['cat-file', '--batch-all-objects', '--unordered', '--batch-check=%(objectname) %(objecttype) %(objectsize)'],
    null,
    (chunk) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const [sha, type, size] = line.split(' ');
        const n = Number(size);
        if (type === 'blob' && n >= MIN_POINTER && n < MAX_POINTER) candidates.push(sha);
      }
    },
    { cwd: dir },
  );
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
