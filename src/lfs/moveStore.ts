import type { LfsStore } from './lfsStore.ts';

/** What happened to one object of a move. */
export type MoveStep = { oid: string; size: number; done: number; total: number } & ({ outcome: 'copied' | 'present' } | { outcome: 'failed'; reason: string });

/** The counts of a whole move. */
export interface MoveSummary {
  total: number;
  copied: number;
  present: number;
  failed: number;
}

/**
 * Copies objects from one store into another, `concurrency` at a time. An object the target
 * already holds with the right size is skipped, so a move interrupted and run again finishes
 * the rest. Each copy is checked twice: its SHA-256 and size while it streams (the target's
 * `write` refuses content that does not match its oid, a corrupt source file included), then
 * its size as the target reports it afterwards. The source is only read, never changed.
 */
export async function moveObjects(
  objects: { oid: string; size: number }[],
  source: LfsStore,
  target: LfsStore,
  onStep: (step: MoveStep) => void,
  concurrency = 4,
): Promise<MoveSummary> {
  const summary: MoveSummary = { total: objects.length, copied: 0, present: 0, failed: 0 };
  let next = 0;
  let done = 0;
  const one = async ({ oid, size }: { oid: string; size: number }): Promise<MoveStep['outcome'] | string> => {
    if ((await target.size(oid)) === size) return 'present';
    await target.write(oid, size, await source.open(oid));
    const stored = await target.size(oid);
    return stored === size ? 'copied' : `the target holds ${stored ?? 'no'} bytes after the copy`;
  };
  const worker = async () => {
    while (next < objects.length) {
      const object = objects[next++];
      const result = await one(object).catch((err: Error) => err.message || String(err));
      done += 1;
      const at = { ...object, done, total: objects.length };
      if (result === 'copied' || result === 'present') {
        summary[result] += 1;
        onStep({ ...at, outcome: result });
      } else {
        summary.failed += 1;
        onStep({ ...at, outcome: 'failed', reason: result });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return summary;
}
