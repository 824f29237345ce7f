import { gitBuffer, gitPiped } from '../git/run.ts';
import { parseLfsPointer, type LfsPointer } from '../import/lfsScan.ts';

// Pointer files are under 1024 bytes (git-lfs spec); the smallest valid one is about 120.
const MIN_POINTER = 100;
const MAX_POINTER = 1024;

/** Reads `<sha> <type> <size>` lines into the blobs whose size a pointer can have. */
function pointerSized(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const [sha, type, size] = line.split(' ');
    const n = Number(size);
    if (type === 'blob' && n >= MIN_POINTER && n < MAX_POINTER) out.push(sha);
  }
  return out;
}

/**
 * The LFS pointers reachable from a repository's branches and tags (what a push mirror
 * pushes), by oid. Blobs of 1 KiB and more are filtered out by rev-list itself, so only
 * commits, trees and small blobs are listed; a pointer's oid is read from its content.
 */
export async function reachableLfsPointers(dir: string): Promise<LfsPointer[]> {
  const ids: string[] = [];
  let pending = '';
  await gitPiped(
    ['rev-list', '--objects', '--no-object-names', `--filter=blob:limit=${MAX_POINTER - 1}`, '--branches', '--tags'],
    null,
    (chunk) => {
      const lines = (pending + chunk.toString('latin1')).split('\n');
      pending = lines.pop()!;
      for (const l of lines) if (l) ids.push(l.replace(/^[?~]/, ''));
    },
    { cwd: dir },
  );
  if (pending) ids.push(pending);
  if (ids.length === 0) return [];
  const checked = await gitBuffer(['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], ids.join('\n') + '\n', { cwd: dir });
  const candidates = pointerSized(checked.toString('latin1'));
  if (candidates.length === 0) return [];
  const contents = await gitBuffer(['cat-file', '--batch'], candidates.join('\n') + '\n', { cwd: dir });
  const found = new Map<string, LfsPointer>();
  // Each answer: "<sha> blob <size>\n<content>\n".
  for (let at = 0; at < contents.length;) {
    const eol = contents.indexOf(10, at);
    if (eol < 0) break;
    const header = contents.subarray(at, eol).toString('latin1');
    if (header.endsWith(' missing')) {
      at = eol + 1;
      continue;
    }
    const size = Number(header.split(' ')[2]);
    const pointer = parseLfsPointer(contents.subarray(eol + 1, eol + 1 + size).toString('utf8'));
    if (pointer) found.set(pointer.oid, pointer);
    at = eol + 1 + size + 1;
  }
  return [...found.values()].sort((a, b) => a.oid.localeCompare(b.oid));
}
