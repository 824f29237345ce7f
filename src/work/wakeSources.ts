import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { listenOn, type Listener } from '../db/listen.ts';

/** What wakes a worker besides its own finished work. */
export interface WakeSources {
  /** In-process signals: [emitter, event name]. */
  signals?: Array<[EventEmitter, string]>;
  /** A Postgres channel to LISTEN on (other processes NOTIFY it after their commits). */
  listen?: { databaseUrl: string; channel: string; what: string; log: Logger };
  /** A poll: catches what nothing announced (a missed wake, a retry or a lease falling due). */
  pollMs?: number;
}

/** Calls `wake` on each source until the returned closer runs. */
export function wakeOn(sources: WakeSources, wake: () => void): () => Promise<void> {
  const onSignal = () => wake();
  for (const [emitter, name] of sources.signals ?? []) emitter.on(name, onSignal);
  const l = sources.listen;
  const listener: Listener | undefined = l ? listenOn(l.databaseUrl, l.channel, onSignal, l.log, l.what) : undefined;
  const poll = sources.pollMs ? setInterval(onSignal, sources.pollMs) : undefined;
  poll?.unref();
  return async () => {
    clearInterval(poll);
    for (const [emitter, name] of sources.signals ?? []) emitter.off(name, onSignal);
    await listener?.close();
  };
}
