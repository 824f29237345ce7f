import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db } from './db/connect.ts';

/** What every part of a running Wharf is given: configuration, database and logger. */
export interface Services {
  config: Config;
  db: Db;
  log: Logger;
}
