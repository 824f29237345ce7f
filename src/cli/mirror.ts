import { EventEmitter } from 'node:events';
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '../config.ts';
import type { Db } from '../db/connect.ts';
import { createLogger } from '../log.ts';
import { isValidName } from '../domain/names.ts';
import { findRepository } from '../domain/repos.ts';
import { findMirror, type Mirror } from '../pullMirrors/state.ts';
import { openSecrets } from '../secrets/boot.ts';
import { EXIT, CliError, openServerDb, type RunWrapper } from './common.ts';

function repoArg(value: string): { org: string; name: string } {
  const [org, name, more] = value.split('/');
  if (more !== undefined || !org || !name || !isValidName(org) || !isValidName(name)) throw new InvalidArgumentError('expected <org>/<repo>');
  return { org, name };
}

/**
 * Waits until the sync asked for at `askedAt` has run: the mirror is held by no sync and
 * not due again before its next interval. A sync that was already running when asked
 * absorbs the request (SPEC §8.1.1), so it is the one followed. Undefined when the
 * repository stopped being a mirror meanwhile.
 */
async function followSync(db: Db, repositoryId: number, askedAt: number): Promise<Mirror | undefined> {
  let said = '';
  for (;;) {
    const mirror = await findMirror(db, repositoryId);
    if (!mirror) return undefined;
    const running = mirror.lockedBy !== null && (mirror.leaseExpiresAt ?? 0) >= Date.now();
    if (!running && mirror.pending === null && mirror.nextSyncAt > askedAt) return mirror;
    const state = running ? 'syncing…' : 'queued…';
    if (state !== said) process.stderr.write(`${state}\n`);
    said = state;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * `wharf mirror sync <org>/<repo>`: queues a sync of a pull mirror in the database and runs
 * it in this process with the runner the server uses (a server sharing the database may
 * take it instead); either way the command follows it to its end, as `wharf import` does.
 * The push events the sync raises are recorded by the running server (or its next start).
 */
export function mirrorCommand(program: Command, run: RunWrapper) {
  const mirror = program.command('mirror').description('pull mirrors: sync one now');
  mirror
    .command('sync')
    .description('sync a pull mirror from its source now, following the sync to its end')
    .argument('<repo>', '<org>/<repo> of the mirror', repoArg)
    .action((target: { org: string; name: string }) =>
      run(async () => {
        const config = loadConfig();
        const db = await openServerDb(config);
        // The runner and the LFS store are loaded by the commands that use them: the others start faster.
        const [{ createMirrorRunner }, { queueSync }, { createLfsStore }] = await Promise.all([
          import('../pullMirrors/runner.ts'),
          import('../pullMirrors/cutover.ts'),
          import('../lfs/fromConfig.ts'),
        ]);
        const services = { config, db, log: createLogger('silent'), lfs: await createLfsStore(config), signals: new EventEmitter() };
        const runner = createMirrorRunner(services);
        try {
          // The runner reads services.config when a sync runs: it gets the checked key.
          services.config = await openSecrets(config, db);
          const repo = await findRepository(db, target.org, target.name);
          if (!repo) throw new CliError(`no repository named ${target.org}/${target.name}`);
          const askedAt = Date.now();
          // Not a mirror (or cut over): a WharfError conflict, printed by main() (exit 1).
          const queued = await queueSync(services, repo);
          process.stderr.write(`mirror ${target.org}/${target.name}: sync from ${queued.sourceUrl}\n`);
          await runner.start();
          const after = await followSync(db, repo.id, askedAt);
          if (!after) throw new CliError(`${target.org}/${target.name} stopped being a mirror during the sync`);
          if (after.lastSyncStatus !== 'succeeded') {
            process.stderr.write(`wharf: sync failed${after.lastError ? `: ${after.lastError}` : ''}\n`);
            return EXIT.failure;
          }
          process.stdout.write(`synced ${target.org}/${target.name} from ${after.sourceUrl}; next sync ${new Date(after.nextSyncAt).toISOString()}\n`);
          return EXIT.ok;
        } finally {
          await runner.stop();
          await db.destroy();
        }
      })(),
    );
}
