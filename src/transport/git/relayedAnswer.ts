import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { cutStalledAnswer } from '../../http/deadlines.ts';
import { RELAY_AFTER, RELAY_IDLE_EXIT, startRelay } from './packRelay.ts';

/** An answer being relayed: `finish` ends it once the backend has exited (and its onExit has run). */
export interface RelayedAnswer {
  finish(): Promise<void>;
}

/**
 * Answers with a pack (an upload-pack answer to a request that ended its negotiation):
 * without chunks, the body running to the end of the connection (`Connection: close`; it
 * is a fetch's last request), so that past RELAY_AFTER bytes the rest can go from the
 * backend's output to the socket through a relay process (packRelay.ts) that the server
 * does not read for. The server carries the answer up to then, and hands over at the first
 * piece after it whose write the socket takes at once with nothing else read and not yet
 * sent, so that nothing of the server's is still queued when the relay starts writing. A
 * client that reads nothing for `idleMs` is cut either way (the socket closed, which kills
 * the backend: cgi.ts), and `onCut` runs.
 */
export function relayedAnswer(
  ctx: Context,
  source: Readable,
  first: Buffer,
  o: { headers: [string, string][]; idleMs: number; log: Logger; onCut: () => void },
): RelayedAnswer {
  const res = ctx.res;
  const socket = ctx.req.socket;
  ctx.respond = false; // written here, not by Koa
  ctx.status = 200; // the backend's own, which only a 200 is relayed with
  for (const [name, value] of o.headers) res.setHeader(name, value);
  res.setHeader('Connection', 'close');
  res.removeHeader('Transfer-Encoding'); // with neither it nor a length, Node sends the body as it is, to the connection's end
  cutStalledAnswer(ctx, o.idleMs, o.onCut);
  let carried = 0;
  let relay: ChildProcess | undefined;
  let relayEnded: Promise<number | null> | undefined;
  let relayStderr = '';
  const handOff = () => {
    source.off('data', carry);
    relay = startRelay(source, socket, o.idleMs);
    source.destroy(); // the relay has its own copy of the descriptor; the server reads no more of it
    relay.stderr!.on('data', (c) => (relayStderr = (relayStderr + c).slice(-2048)));
    relayEnded = new Promise((resolve) => {
      relay!.on('error', () => resolve(null));
      relay!.on('close', (code) => resolve(code));
    });
  };
  const carry = (chunk: Buffer) => {
    const more = res.write(chunk);
    carried += chunk.length;
    // Only with nothing of the backend's left in the stream's buffer (pieces read while it was
    // paused, emitted one by one after): those bytes are the server's to send, not the relay's.
    if (carried >= RELAY_AFTER && !socket.destroyed && source.readableLength === 0) {
      socket.uncork(); // http corks the socket for each write until the next tick: written now, or queued
      if (res.writableLength === 0) return handOff();
    }
    if (!more) {
      source.pause();
      res.once('drain', () => source.resume());
    }
  };
  res.once('close', () => {
    if (relay && relay.exitCode === null && relay.signalCode === null) relay.kill('SIGTERM');
  });
  if (first.length > 0) carry(first);
  if (!relay) source.on('data', carry).resume();
  return {
    async finish() {
      if (!relayEnded) return void res.end();
      const code = await relayEnded;
      if (code === 0) return void res.end();
      if (code === RELAY_IDLE_EXIT) o.onCut();
      else if (!socket.destroyed)
        o.log.info({ request_id: ctx.state.requestId, code, stderr: relayStderr.trim() || undefined }, 'git answer relay ended early');
      socket.destroy();
    },
  };
}
