import { isPostgres } from '../db/connect.ts';
import { repoDir } from '../git/bare.ts';
import { pushHousekeeping } from './housekeeping.ts';
import { isZero } from '../git/refUpdate.ts';
import { settleHead } from '../domain/head.ts';
import type { Repository } from '../domain/repos.ts';
import { wake, type DomainContext, type Services } from '../services.ts';
import { readPushLog, removePushLog } from './log.ts';
import { insertPushRecord } from './records.ts';
import { announcePush } from './wake.ts';

/** A push the backend has taken: its repository, who pushed it, and the push log its hook wrote. */
export interface LandedPush {
  repository: Repository;
  pusherId: number | null;
  /** The push log file handed to the hook (log.ts); nothing in it when nothing landed. */
  pushLog: string;
}

/** A push that moved at least this many refs has its refs packed afterwards (git/bare.ts tidyAfterPush, through housekeeping.ts). */
export const PACK_REFS_AFTER = 32;

/** Tries at writing a push record before the push is given up on; the n-th failure waits n × RETRY_STEP_MS. */
const RECORD_TRIES = 3;
const RETRY_STEP_MS = 200;

/**
 * Lands a push, once `git http-backend` has run and before its answer ends. What must be
 * true then: its push record (ref updates, pusher, landing time, every ref after the
 * push) is committed to the database, so any node records its events even if this one
 * is lost; and, when branches came or went, HEAD names one that exists (so a clone right
 * after a first push checks out). Then the push recorders are woken (here, and on
 * Postgres every node); one of them records the events in the background. Throws when
 * the record could not be written: the caller must not promise the push.
 */
export async function landPush(context: DomainContext & Pick<Services, 'log'>, push: LandedPush): Promise<void> {
  const { db, config, log } = context;
  const { repository: repo, pusherId, pushLog } = push;
  const started = performance.now();
  const landed = await readPushLog(pushLog);
  if (!landed) return; // nothing landed: the hook never ran
  if (landed.updates.some((u) => u.ref.startsWith('refs/heads/') && (isZero(u.before) || isZero(u.after)))) {
    // Before the record: the recorder's payloads name the default branch settled here.
    await settleHead(db, repoDir(config.reposDir, repo.org, repo.name), repo, landed.refsAfter).catch((err) =>
      log.error({ err }, 'could not settle HEAD after a push'),
    );
  }
  for (let n = 1; ; n++) {
    try {
      await insertPushRecord(db, repo.id, pusherId, landed);
      break;
    } catch (err) {
      if (n >= RECORD_TRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, RETRY_STEP_MS * n));
    }
  }
  await removePushLog(pushLog);
  log.debug(
    { repository: `${repo.org}/${repo.name}`, refs: landed.updates.length, land_ms: Math.round((performance.now() - started) * 10) / 10 },
    'push landed',
  );
  // What follows the record starts once the push's answer has gone out (after this tick's
  // microtasks and next ticks, where the answer ends): the recorder it wakes reads the
  // database and starts git, and the housekeeping starts git, and each process started from
  // this one is forked from it, which held the answer's end back by some 10 ms.
  setImmediate(() => {
    wake(context).pushRecords();
    if (isPostgres(db)) void announcePush(db, log);
    // In the background and in turn (housekeeping.ts): the push is promised already, and this is only for speed.
    pushHousekeeping.schedule(repoDir(config.reposDir, repo.org, repo.name), landed.updates.length >= PACK_REFS_AFTER, (err) =>
      log.warn({ err, repository: `${repo.org}/${repo.name}` }, 'could not tidy a repository after a push'),
    );
  });
}
