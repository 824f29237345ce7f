import fs from 'node:fs/promises';
import path from 'node:path';
import type { Services } from '../services.ts';
import { isPostgres } from '../db/connect.ts';
import { repoDir } from '../git/bare.ts';
import { linkedObjects, linkObject } from '../lfs/links.ts';
import { openCredentials } from '../secrets/credentials.ts';
import { HostPolicyError } from '../net/hostPolicy.ts';
import { repositoryById, type Repository } from '../domain/repos.ts';
import { settleHead } from '../domain/head.ts';
import { askpassProgram, GitRunError, remoteGit } from '../remote/gitRemote.ts';
import { fetchLfsObjects } from '../remote/lfsFetch.ts';
import { scrubSecrets } from '../remote/gitErrors.ts';
import { parseSourceUrl, pinSource, type Credentials } from '../remote/url.ts';
import { insertPushRecord } from '../pushes/records.ts';
import { parseUpdates } from '../pushes/log.ts';
import { isZero, type RefUpdate } from '../git/refUpdate.ts';
import { announcePush } from '../pushes/wake.ts';
import { diffRefs, dropStaging, moveRefs, readRefs, STAGING, updateLines } from './refs.ts';
import { newGitmodulesProblem, newLfsPointers } from './scan.ts';
import type { Mirror } from './state.ts';
import { wake } from '../services.ts';

/** Raised when the sync may no longer move this mirror's refs: the cutover came, or another node took the lease. Control flow, never shown. */
export class SyncStopped extends Error {}

/** Syncs that died with their node this many times in a row are parked (SPEC §7.9). */
export const MAX_INTERRUPTIONS = 3;

/**
 * One sync of a claimed mirror (SPEC §8.1.1):
 * 1. finish the ref updates an earlier sync wrote down and did not commit (`pending`);
 * 2. fetch every ref of the source, with pruning, into the hidden STAGING namespace (the
 *    visible refs do not move; clients never see the staged ones);
 * 3. check the new commits' .gitmodules (as a push) and fetch the LFS objects the new
 *    history names (checked as uploads), linking them to the repository;
 * 4. write the intended updates (old → new) into `pending`, only while this node still
 *    holds the mirror (the cutover deletes the row, so no ref moves after it answered);
 * 5. move every visible ref in one `update-ref` transaction, old values verified;
 * 6. commit the push record (one `push` event per changed ref, as for a push) with
 *    `pending` cleared and the mirror's success, in one transaction.
 * A crash after 5 leaves `pending`; the next claim (or the cutover) runs 5 for the refs
 * not yet moved and then 6, so no event is lost and the refs are old or new, never mixed.
 */
export async function syncMirror(services: Services, mirror: Mirror, owner: string, signal: AbortSignal): Promise<void> {
  const { db, config, log } = services;
  const repo = await repositoryById(db, mirror.repositoryId);
  if (!repo) return;
  const dir = repoDir(config.reposDir, repo.org, repo.name);
  if (mirror.pending) await finishPending(services, repo, mirror, owner);
  const credentials: Credentials | null = mirror.credentials ? openCredentials(config, mirror.credentials) : null;
  const started = Date.now();
  try {
    const source = parseSourceUrl(mirror.sourceUrl);
    const work = path.join(config.reposDir, '.mirrors');
    const askpass = await askpassProgram(work);
    const pin = await pinSource(config.importAllowedHosts, source.url);
    await remoteGit(['fetch', '--prune', '--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', '--quiet', '--', pin.url, `+refs/*:${STAGING}*`], {
      cwd: dir,
      pin: pin.config,
      credentials,
      askpass,
      signal,
      stallMs: config.importStallTimeoutMs,
    });
    const { visible, staged } = await readRefs(dir);
    const updates = diffRefs(visible, staged);
    if (updates.length > 0) {
      const problem = await newGitmodulesProblem(dir, updates, visible);
      if (problem) throw new Error(`the source's objects fail Wharf's integrity checks (fsck, as for a push): ${problem}`);
      const found = await newLfsPointers(dir, updates, visible);
      const linked = await linkedObjects(
        db,
        repo.id,
        found.map((p) => p.oid),
      );
      const pointers = found.filter((p) => !linked.has(p.oid));
      if (pointers.length > 0) {
        const journal = path.join(work, `mirror-${mirror.id}.lfs`);
        await fs.rm(journal, { force: true });
        const lfs = await fetchLfsObjects(pointers, {
          url: source.url,
          endpoint: mirror.lfsUrl,
          credentials,
          policy: config.importAllowedHosts,
          lfs: services.lfs,
          journal,
          stallMs: config.importStallTimeoutMs,
          signal,
        });
        await fs.rm(journal, { force: true });
        for (const object of lfs.stored) await linkObject(db, repo.id, object.oid, object.size);
        if (lfs.missing.length > 0)
          log.warn({ repository: `${repo.org}/${repo.name}`, missing_lfs_objects: lfs.missing.length }, 'mirror sync: LFS objects missing at the source');
      }
      if (signal.aborted) throw new SyncStopped('stopped');
      const held = await db('repository_mirrors')
        .where({ repository_id: repo.id, locked_by: owner })
        .whereNull('pending')
        .update({ pending: updateLines(updates), updated_at: Date.now() });
      if (held === 0) throw new SyncStopped('the mirror was cut over or taken over');
      try {
        await moveRefs(dir, updates);
      } catch (err) {
        // The transaction moved nothing (git verified every old value first): no intent is left.
        await db('repository_mirrors').where({ repository_id: repo.id, locked_by: owner }).update({ pending: null });
        throw err;
      }
      await commitSync(services, repo, owner, updates, staged);
    } else {
      await markSynced(services, repo.id, owner, 'succeeded', null);
    }
    log.info({ repository: `${repo.org}/${repo.name}`, refs_changed: updates.length, ms: Date.now() - started }, 'mirror synced');
  } catch (err) {
    if (err instanceof SyncStopped || (signal.aborted && signal.reason !== 'shutdown')) {
      // Cut over (or taken over): whatever was staged is no longer ours to keep.
      if (!(await db('repository_mirrors').where('repository_id', repo.id).first('id'))) await dropStaging(dir).catch(() => {});
      log.info({ repository: `${repo.org}/${repo.name}` }, 'mirror sync stopped: cut over or taken over');
      return;
    }
    if (signal.aborted) return; // shutdown: the runner gives the mirror back, due again at once
    const message = describeFailure(err, credentials);
    await markSynced(services, repo.id, owner, 'failed', message);
    log.warn({ repository: `${repo.org}/${repo.name}`, source_url: mirror.sourceUrl, error: message }, 'mirror sync failed');
  }
}

function describeFailure(err: unknown, credentials: Credentials | null): string {
  if (err instanceof HostPolicyError) return `the source address is blocked by the host policy (IMPORT_ALLOWED_HOSTS): ${err.explain('IMPORT_ALLOWED_HOSTS')}`;
  if (err instanceof GitRunError) return err.message;
  return scrubSecrets(String((err as Error)?.message ?? err), credentials).slice(0, 1000);
}

/** Records a sync's end on the mirror row this node holds, and gives the lease back; the next one is an interval away. */
async function markSynced(services: Services, repositoryId: number, owner: string, status: 'succeeded' | 'failed', error: string | null): Promise<void> {
  const { db } = services;
  const mirror = await db('repository_mirrors').where({ repository_id: repositoryId }).first('interval_ms');
  if (!mirror) return;
  const now = Date.now();
  await db('repository_mirrors')
    .where({ repository_id: repositoryId, locked_by: owner })
    .update({
      last_sync_at: now,
      last_sync_status: status,
      last_error: error,
      next_sync_at: now + Number(mirror.interval_ms),
      interruptions: 0,
      locked_by: null,
      lease_expires_at: null,
      updated_at: now,
    });
}

/**
 * Commits the push record of a sync's moved refs with `pending` cleared and the sync's
 * success, in one transaction; then settles HEAD if branches came or went, and wakes the
 * push recorders. `refsAfter` is every visible ref after the move.
 */
async function commitSync(
  services: Services,
  repo: Repository,
  owner: string,
  updates: RefUpdate[],
  refsAfter: Map<string, string>,
  release = true,
): Promise<void> {
  const { db, config, log } = services;
  const now = Date.now();
  await db.transaction(async (trx) => {
    const row = await trx('repository_mirrors').where({ repository_id: repo.id, locked_by: owner }).first('interval_ms');
    if (!row) throw new SyncStopped('the mirror was taken over before its push record was committed');
    await insertPushRecord(trx, repo.id, null, { updates, refsAfter, landedAt: now });
    const held = trx('repository_mirrors').where({ repository_id: repo.id, locked_by: owner });
    if (!release) return void (await held.update({ pending: null, updated_at: now }));
    await held.update({
      pending: null,
      last_sync_at: now,
      last_sync_status: 'succeeded',
      last_error: null,
      next_sync_at: now + Number(row.interval_ms),
      interruptions: 0,
      locked_by: null,
      lease_expires_at: null,
      updated_at: now,
    });
  });
  wake(services).pushRecords();
  if (isPostgres(db)) void announcePush(db, log);
  if (updates.some((u) => u.ref.startsWith('refs/heads/') && (isZero(u.before) || isZero(u.after)))) {
    await settleHead(db, repoDir(config.reposDir, repo.org, repo.name), repo, refsAfter).catch((err) =>
      log.error({ err }, 'could not settle HEAD after a mirror sync'),
    );
  }
}

/**
 * Finishes the ref updates a sync wrote down and did not commit (its node died, or its
 * commit failed): the refs still at their old value move (one verified transaction), then
 * the push record commits. A ref that is neither at its old nor its new value (never, as
 * nothing else writes a mirror's refs) drops the whole intent, with an error logged.
 * The caller holds the mirror's lease as `owner`, and keeps it (`release` false) when a sync follows.
 */
export async function finishPending(services: Services, repo: Repository, mirror: Mirror, owner: string, release = false): Promise<void> {
  const { db, config, log } = services;
  const dir = repoDir(config.reposDir, repo.org, repo.name);
  const updates = parseUpdates(mirror.pending ?? '');
  const { visible } = await readRefs(dir);
  const zero = (u: RefUpdate) => '0'.repeat(u.before.length);
  const current = (u: RefUpdate) => visible.get(u.ref) ?? zero(u);
  const stray = updates.filter((u) => current(u) !== u.before && current(u) !== u.after);
  if (stray.length > 0) {
    log.error(
      { repository: `${repo.org}/${repo.name}`, refs: stray.map((u) => u.ref) },
      'mirror sync: refs moved by something else; its unfinished updates are dropped',
    );
    await db('repository_mirrors').where({ repository_id: repo.id, locked_by: owner }).update({ pending: null });
    return;
  }
  try {
    await moveRefs(
      dir,
      updates.filter((u) => current(u) === u.before),
    );
  } catch (err) {
    log.error({ err, repository: `${repo.org}/${repo.name}` }, 'mirror sync: unfinished ref updates could not be made; they are dropped');
    await db('repository_mirrors').where({ repository_id: repo.id, locked_by: owner }).update({ pending: null });
    return;
  }
  const after = new Map(visible);
  for (const u of updates) {
    if (isZero(u.after)) after.delete(u.ref);
    else after.set(u.ref, u.after);
  }
  await commitSync(services, repo, owner, updates, after, release);
  log.info({ repository: `${repo.org}/${repo.name}`, refs_changed: updates.length }, 'mirror sync: unfinished ref updates finished');
}
