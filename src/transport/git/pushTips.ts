import fs from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pktLength } from './pktLine.ts';

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
 * Reads the complete packets at the start of `bytes` into `tips` (the new ids of their
 * commands, deletions left out, in order): 'done' at the flush packet that closes the
 * commands, 'bad' when the bytes are not a command section this reads, else 'more' with the
 * `rest`, the start of a packet not complete yet.
 */
function readPackets(bytes: Buffer, tips: string[]): { state: 'done' | 'bad' } | { state: 'more'; rest: Buffer } {
  let at = 0;
  for (let size = pktLength(bytes, at); size !== undefined; size = pktLength(bytes, at)) {
    if (size < 0 || (size > 0 && size < 4)) return { state: 'bad' };
    if (size === 0) return { state: 'done' }; // the flush packet: the commands are all here
    if (bytes.length < at + size) break;
    const id = COMMAND.exec(bytes.toString('latin1', at + 4, at + size))?.[1];
    if (id && !ZERO.test(id)) tips.push(id);
    at += size;
  }
  return { state: 'more', rest: bytes.subarray(at) };
}

/**
 * The new ids named by the command section of a push body (deletions left out, in their
 * order), once the section is complete in `head`; undefined while more is needed, null
 * when the bytes are not a command section this reads.
 */
export function pushTips(head: Buffer): string[] | null | undefined {
  const tips: string[] = [];
  const read = readPackets(head, tips);
  return read.state === 'done' ? tips : read.state === 'bad' ? null : undefined;
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
    const tips: string[] = [];
    let rest: Buffer = Buffer.alloc(0);
    let seen = 0;
    const done = () => {
      body.off('data', onData);
      rest = Buffer.alloc(0);
    };
    stop = () => (done(), resolve());
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      // Each packet is read once: only the start of one not complete yet is kept between chunks.
      const read = readPackets(rest.length === 0 ? chunk : Buffer.concat([rest, chunk]), tips);
      if (read.state === 'more' && seen < MAX_COMMAND_BYTES) return void (rest = read.rest);
      done();
      stop = () => {}; // settled below
      if (read.state !== 'done' || tips.length === 0) return resolve();
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
