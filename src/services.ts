import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db } from './db/connect.ts';

/** What every part of a running Wharf is given: configuration, database and logger. */
export interface Services {
  config: Config;
  db: Db;
  log: Logger;
  /**
   * In-process signals between parts: 'deliveries' means new deliveries were
   * committed (the dispatcher wakes); 'imports' means a new import job was queued.
   */
  signals: EventEmitter;
  /** The address this process actually listens on (real port), for calls to itself over loopback; unset outside startServer. */
  listenUrl?: string;
}

/** Tells the dispatcher that deliveries were committed; call after the transaction that wrote them. */
export function notifyDeliveries(services: Pick<Services, 'signals'>): void {
  services.signals.emit('deliveries');
}
