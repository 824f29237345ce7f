import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db } from './db/connect.ts';
import type { LfsStore } from './lfs/lfsStore.ts';

/** What every part of a running Wharf is given: configuration, database, logger and the LFS store. */
export interface Services {
  config: Config;
  db: Db;
  log: Logger;
  /** Where LFS objects' bytes are kept, built once by the root (createLfsStore in src/server.ts). */
  lfs: LfsStore;
  /** In-process signals between parts: the wake-ups of SIGNAL (sent through wake()), each heard by its worker. */
  signals: EventEmitter;
  /** The address this process actually listens on (real port), for calls to itself over loopback; unset outside startServer. */
  listenUrl?: string;
}

/** What a domain operation is handed: it commits its change, then wakes the workers it made work for (wake()). */
export type DomainContext = Pick<Services, 'db' | 'config' | 'signals'> & { log?: Logger };

/** The in-process signals that wake workers, named in this one place so a sender and its listener cannot disagree. */
export const SIGNAL = {
  /** New deliveries were committed: the dispatcher claims. */
  deliveries: 'deliveries',
  /** An import job was queued: the import runner claims. */
  imports: 'imports',
  /** An import job was canceled (its id): the runner stops it if it runs here. */
  importCancel: 'import-cancel',
  /** A push landed and its record was written: the push recorder claims. */
  pushRecords: 'push-records',
  /** Push mirrors became due (created, a push recorded, "sync now"): the push-mirror worker claims. */
  pushMirrors: 'push-mirrors',
  /** Pull mirrors became due: the mirror runner claims. */
  pullMirrors: 'pull-mirrors',
  /** A pull mirror was cut over (its repository id): the runner stops its sync if it runs here. */
  mirrorStop: 'mirror-stop',
} as const;

/** Typed wake-ups over a process's signals; call each after the transaction that made the work commits. */
export function wake(services: Pick<Services, 'signals'>) {
  const { signals } = services;
  return {
    deliveries: () => void signals.emit(SIGNAL.deliveries),
    imports: () => void signals.emit(SIGNAL.imports),
    importCancel: (jobId: number) => void signals.emit(SIGNAL.importCancel, jobId),
    pushRecords: () => void signals.emit(SIGNAL.pushRecords),
    pushMirrors: () => void signals.emit(SIGNAL.pushMirrors),
    pullMirrors: () => void signals.emit(SIGNAL.pullMirrors),
    mirrorStop: (repositoryId: number) => void signals.emit(SIGNAL.mirrorStop, repositoryId),
  };
}
