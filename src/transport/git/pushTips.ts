import fs from 'node:fs/promises';
import type { Readable } from 'node:stream';

// A push's request body opens with its commands, one pkt-line each ("<old> <new> <ref>",
// the first with the capabilities after a NUL; shallow lines before them, and in a signed
// push the commands inside its certificate), closed by a flush packet, and only then the
// pack. The new ids of those commands are written to the push's tips file as they stream
// past, so the `.gitmodules` walk can start as soon as the pack is indexed, beside git's
// connectivity check, instead of after it in the pre-receive hook (hooks.ts). The hook
// uses that walk only if it read exactly these tips on its own stdin, and walks itself
// otherwise: the file is a head start, never a source of truth.

/** The most command bytes read before giving up (a mirror push of 7,000 refs is about 800 KB). */
const MAX_COMMAND_BYTES = 4 * 1024 * 1024;

const COMMAND = /^[0-9a-f]{40}(?:[0-9a-f]{24})? ([0-9a-f]{40}(?:[0-9a-f]{24})?) /;
const ZERO = /^0+$/;

/**
 * The new ids named by the command section of a push body (deletions left out, in their
 * order), once the section is complete in `head`; undefined while more is needed, null
 * when the bytes are not a command section this reads.
 */
export function pushTips(head: Buffer): string[] | null | undefined {
  const tips: string[] = [];
  for (let at = 0; ;) {
    if (head.length < at + 4) return undefined;
    const size = Number.parseInt(head.toString('latin1', at, at + 4), 16);
    if (!/^[0-9a-f]{4}$/.test(head.toString('latin1', at, at + 4)) || (size > 0 && size < 4)) return null;
    if (size === 0) return tips; // the flush packet: the commands are all here
    if (head.length < at + size) return undefined;
    const line = head.toString('latin1', at + 4, at + size);
    const id = COMMAND.exec(line)?.[1];
    if (id && !ZERO.test(id)) tips.push(id);
    at += size;
  }
}

/** The tips of a push being read (notePushTips): `stop` stops reading; `settled` resolves once the file is written or will not be. */
export interface PushTipsNote {
  stop(): void;
  settled: Promise<void>;
}

/**
 * Reads the commands off a push body as it streams to the backend (alongside its pipe,
 * taking nothing from it) and writes their new ids to `file`, one a line, under a
 * temporary name renamed into place. Writes nothing for a body it cannot read. `settled`
 * never fails, so the caller can stop it and await it after its push, then remove the file
 * without racing the write.
 */
export function notePushTips(body: Readable, file: string): PushTipsNote {
  let stop = () => {};
  const settled = new Promise<void>((resolve) => {
    let head: Buffer = Buffer.alloc(0);
    const done = () => {
      body.off('data', onData);
      head = Buffer.alloc(0);
    };
    stop = () => (done(), resolve());
    const onData = (chunk: Buffer) => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const tips = pushTips(head);
      if (tips === undefined && head.length < MAX_COMMAND_BYTES) return;
      done();
      stop = () => {}; // the write below settles it
      if (!tips || tips.length === 0) return resolve();
      const tmp = `${file}.tmp`;
      fs.writeFile(tmp, `${tips.join('\n')}\n`)
        .then(() => fs.rename(tmp, file))
        .catch(() => fs.rm(tmp, { force: true }).catch(() => undefined))
        .finally(resolve);
    };
    body.on('data', onData);
  });
  return { stop: () => stop(), settled };
}
