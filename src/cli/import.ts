import { EventEmitter } from 'node:events';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadConfig } from '../config.ts';
import type { Db } from '../db/connect.ts';
import { createLogger } from '../log.ts';
import { findOrg } from '../domain/accounts.ts';
import { isValidName } from '../domain/names.ts';
import { VISIBILITIES } from '../domain/repos.ts';
import { cancelImportJob, createImportJob, findImportJob, type ImportJob } from '../import/jobs.ts';
import { openSecrets } from '../secrets/boot.ts';
import type { ImportResult } from '../import/finalize.ts';
import { EXIT, CliError, openServerDb, type RunWrapper } from './common.ts';

function targetArg(value: string): { org: string; name: string } {
  const [org, name, more] = value.split('/');
  if (more !== undefined || !org || !name || !isValidName(org) || !isValidName(name)) throw new InvalidArgumentError('expected <org>/<name>');
  return { org, name };
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text.replace(/\r?\n$/, '');
}

const mib = (n: number | null) => (n === null ? '' : ` ${(n / 1024 / 1024).toFixed(1)} MiB`);

/** One line describing where a job stands; while there is no percent yet, the state stands in its place. */
export function progressLine(job: ImportJob, width = 24): string {
  const percent = job.percent ?? 0;
  const filled = Math.round((percent / 100) * width);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
  const objects = job.objects_received === null ? '' : ` ${job.objects_received} objects`;
  const phase = job.phase ?? job.status;
  if (job.percent === null) return `${job.status.padEnd(12)} ${bar} ${phase}…`;
  return `${job.status.padEnd(12)} ${bar} ${String(job.percent).padStart(3)}% ${phase}${objects}${mib(job.bytes_received)}`;
}

/** The report of a finished import on stdout: counts, then each LFS object the source could not give. */
function resultText(target: string, result: ImportResult): string {
  const missing = result.missing_lfs_objects;
  let text =
    `imported ${target}: ${result.branches} branches, ${result.tags} tags, ${result.lfs_objects} LFS objects` +
    `${missing.length ? ` (${missing.length} missing at the source)` : ''}, default branch ${result.default_branch}\n`;
  for (const m of missing) text += `missing LFS object ${m.oid} (${m.size} bytes): ${m.error}\n`;
  return text;
}

/**
 * `wharf import <source_url> <org>/<name>`: queues an import in the database and runs
 * it in this process with the same runner the server uses (a server sharing the
 * database may take it instead; either way this command follows it to the end).
 * A password comes from stdin (--password-stdin), never from an argument.
 */
export function importCommand(program: Command, run: RunWrapper) {
  program
    .command('import')
    .description('import a repository from an http, https or git URL, following its progress')
    .argument('<source_url>', 'http, https or git URL of the source')
    .argument('<target>', '<org>/<name> of the new repository', targetArg)
    .addOption(new Option('--visibility <visibility>', 'visibility of the new repository').choices(VISIBILITIES).default('private'))
    .option('--username <username>', 'user name for the source')
    .option('--password-stdin', 'read the source password or token from stdin', false)
    .option('--lfs-url <url>', "the source's LFS endpoint, when the one guessed from the URL is wrong")
    .option('--allow-missing-lfs', 'exit 0 even when LFS objects are missing at the source', false)
    .option('--mirror', 'keep the repository a mirror of its source until the cutover (DELETE …/mirror)', false)
    .option('--mirror-interval <duration>', 'how often the mirror syncs (10m, 8h, 1d; default 8h; with --mirror)')
    .action(
      (
        sourceUrl: string,
        target: { org: string; name: string },
        opts: {
          visibility: string;
          username?: string;
          passwordStdin: boolean;
          lfsUrl?: string;
          allowMissingLfs: boolean;
          mirror: boolean;
          mirrorInterval?: string;
        },
      ) =>
        run(async () => {
          const config = loadConfig();
          const password = opts.passwordStdin ? await readStdin() : undefined;
          const db = await openServerDb(config);
          // The runner and the LFS store are loaded by the commands that use them: the others start faster.
          const [{ createImportRunner }, { createLfsStore }] = await Promise.all([import('../import/runner.ts'), import('../lfs/fromConfig.ts')]);
          const services = { config, db, log: createLogger('silent'), lfs: await createLfsStore(config), signals: new EventEmitter() };
          const runner = createImportRunner(services);
          try {
            // The runner reads services.config when a job runs: it gets the checked key.
            services.config = await openSecrets(config, db);
            const org = await findOrg(db, target.org);
            if (!org) throw new CliError(`no organization named ${target.org}`);
            // A refused request reaches main(), which prints it in one line (exit 2 for bad input, 1 for a conflict).
            let job: ImportJob = await createImportJob(services, org, null, {
              source_url: sourceUrl,
              name: target.name,
              visibility: opts.visibility,
              auth_username: opts.username,
              auth_password: password,
              lfs_url: opts.lfsUrl,
              mirror: opts.mirror,
              mirror_interval: opts.mirrorInterval,
            });
            process.stderr.write(`import ${job.id}: ${job.source_url} → ${target.org}/${target.name}\n`);
            const interrupted = () => void cancelImportJob(services, job);
            process.once('SIGINT', interrupted);
            await runner.start();
            job = await follow(db, job.id);
            process.off('SIGINT', interrupted);
            if (job.status !== 'succeeded') {
              process.stderr.write(`wharf: import ${job.status}${job.error ? `: ${job.error}` : ''}\n`);
              return EXIT.failure;
            }
            const result: ImportResult = JSON.parse(job.result!);
            process.stdout.write(resultText(`${target.org}/${target.name}`, result));
            if (result.missing_lfs_objects.length && !opts.allowMissingLfs) {
              process.stderr.write(
                `wharf: ${result.missing_lfs_objects.length} LFS objects missing at the source (the repository was imported; --allow-missing-lfs accepts this)\n`,
              );
              return EXIT.failure;
            }
            return EXIT.ok;
          } finally {
            await runner.stop();
            await db.destroy();
          }
        })(),
    );
}

/** Polls a job until it finishes, drawing progress on stderr (a bar on a terminal, a line per change otherwise). */
async function follow(db: Db, id: number): Promise<ImportJob> {
  const tty = process.stderr.isTTY;
  let last = '';
  for (;;) {
    const job = (await findImportJob(db, id))!;
    const line = progressLine(job);
    // Off a terminal, print when the phase changes or the percent crosses a tenth.
    const key = tty ? line : `${job.status} ${job.phase} ${Math.floor((job.percent ?? 0) / 10)}`;
    if (key !== last) {
      process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
      last = key;
    }
    if (job.finished_at !== null) {
      if (tty) process.stderr.write('\n');
      return job;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
