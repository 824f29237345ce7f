import { EventEmitter } from 'node:events';
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '../config.ts';
import { isPostgres } from '../db/connect.ts';
import { CHANNEL } from '../delivery/runtime/listen.ts';
import { validationFailed } from '../errors/wharfError.ts';
import { CliError, openServerDb, type RunWrapper } from './common.ts';

function idArg(value: string): number {
  if (!/^[1-9][0-9]{0,14}$/.test(value)) throw new InvalidArgumentError('a webhook id (a positive integer)');
  return Number(value);
}

/**
 * `wharf webhook redeliver <id> --since 24h [--until <time>]`: the bulk redelivery of the
 * API, run in process on the database (no token: whoever runs it on the server is the
 * operator), for deliveries that failed while a receiver was down. A running server is
 * told at once on Postgres (NOTIFY); on SQLite its dispatcher's poll finds them.
 */
export function webhookCommands(program: Command, run: RunWrapper) {
  const webhook = program.command('webhook').description('webhooks');
  webhook
    .command('redeliver')
    .argument('<id>', 'webhook id', idArg)
    .description('send again every failed delivery of a webhook that finished in a window and was not redelivered yet')
    .requiredOption('--since <time>', 'a duration back from now (24h, 30m, 7d) or an RFC 3339 time')
    .option('--until <time>', 'a duration back from now or an RFC 3339 time (default: now)')
    .action((id: number, opts: { since: string; until?: string }) =>
      run(async () => {
        // Loaded by this command alone: the others start faster.
        const [{ findWebhook }, { redeliverFailed }, { checkRedeliveryTimes, redeliveryWindow }] = await Promise.all([
          import('../webhooks/store.ts'),
          import('../webhooks/history.ts'),
          import('../webhooks/input.ts'),
        ]);
        const now = Date.now();
        const checked = checkRedeliveryTimes(opts.since, opts.until, now);
        if (checked.problems) throw validationFailed(checked.problems);
        const { input } = checked;
        const config = loadConfig();
        const db = await openServerDb(config);
        try {
          if (!(await findWebhook(db, id))) throw new CliError(`no webhook with id ${id}`);
          // One call, as the API makes: at most 10,000 in one transaction; `remaining` says whether to run it again.
          const { redelivered, remaining } = await redeliverFailed({ db, config, signals: new EventEmitter() }, id, redeliveryWindow(input, now));
          if (redelivered > 0 && isPostgres(db)) await db.raw(`NOTIFY ${CHANNEL}`);
          process.stdout.write(`redelivered ${redelivered}, remaining ${remaining}\n`);
        } finally {
          await db.destroy();
        }
      })(),
    );
}
