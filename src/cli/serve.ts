import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { connect, migrate } from '../db/connect.ts';
import { signInHint } from '../domain/bootstrap.ts';
import type { RunWrapper } from './common.ts';

/** `wharf serve` and `wharf migrate`. */
export function serveCommand(program: Command, run: RunWrapper) {
  program
    .command('serve')
    .description('migrate the database and serve Git, the API and the web UI')
    .action(
      run(async () => {
        const config = loadConfig();
        // Loaded here, not at the top: the other commands start without the server's modules (two thirds of the CLI's start-up).
        const { startServer } = await import('../server.ts');
        const running = await startServer(config);
        // One write: a reader that sees the address also sees the first start's token.
        const home = `${running.services.config.baseUrl}/`;
        let banner = `Wharf is listening on ${running.url} (public address ${running.services.config.baseUrl})\n`;
        if (running.bootstrap) {
          const { login, org, token } = running.bootstrap;
          banner +=
            `Created user "${login}" (site administrator) and organization "${org}".\n` +
            `Open ${home} and sign in with this token: ${token}\n` +
            `It is shown once: keep it. The API takes it as "Authorization: Bearer <token>"; git push and clone take it as the password, with any user name.\n` +
            `More tokens: npx wharf token create <login>\n`;
        } else {
          // A first start whose token was never seen (it failed, or the terminal closed) would otherwise leave no way in.
          const login = await signInHint(running.services.db);
          if (login) banner += `Sign in with a token: npx wharf token create ${login}\n`;
        }
        // The handlers first, then the banner: whoever reads the address may stop it at once.
        const stopped = new Promise<void>((resolve) => {
          const shutdown = () => {
            process.off('SIGTERM', shutdown);
            process.off('SIGINT', shutdown);
            running.services.log.info('shutting down');
            void running.stop().then(resolve);
          };
          process.on('SIGTERM', shutdown);
          process.on('SIGINT', shutdown);
        });
        process.stdout.write(banner);
        await stopped;
      }),
    );

  program
    .command('migrate')
    .description('bring the database schema up to date')
    .action(
      run(async () => {
        const db = connect(loadConfig().databaseUrl);
        try {
          await migrate(db);
          process.stdout.write('database is up to date\n');
        } finally {
          await db.destroy();
        }
      }),
    );
}
