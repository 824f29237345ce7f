import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { serveCommand } from './serve.ts';
import { adminCommands } from './admin.ts';
import { importCommand } from './import.ts';
import { rotateKeyCommand } from './rotateKey.ts';
import { webhookCommands } from './webhook.ts';
import { mirrorCommand } from './mirror.ts';
import { lfsCommands } from './lfs.ts';
import { version } from '../version.ts';
import { CliError, EXIT } from './common.ts';
import { WharfError } from '../errors/wharfError.ts';
import { classify } from '../http/classify.ts';
import { useFanOut } from '../events/fanOut.ts';
import { webhookFanOut } from '../webhooks/fanout.ts';

export { CliError, EXIT, type RunWrapper } from './common.ts';

/** Runs the wharf CLI with arguments; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  // Commands that work on the database without a server (an import, a mirror sync) record events too.
  useFanOut(webhookFanOut);
  const program = new Command('wharf').version(version).description('Wharf: Git hosting with webhooks and imports');
  program.exitOverride();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  let code: number = EXIT.ok;
  const run = (action: () => Promise<number | void>) => async () => {
    code = (await action()) ?? EXIT.ok;
  };
  serveCommand(program, run);
  adminCommands(program, run);
  importCommand(program, run);
  rotateKeyCommand(program, run);
  webhookCommands(program, run);
  mirrorCommand(program, run);
  lfsCommands(program, run);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`wharf: configuration error: ${err.message}\n`);
      return EXIT.failure;
    }
    if (err instanceof CliError) {
      process.stderr.write(`wharf: ${err.message}\n`);
      return EXIT.failure;
    }
    if (err instanceof WharfError) return failureLine(err);
    // The operator runs the CLI on the server itself: an unexpected error's own message helps them and reaches no one else.
    process.stderr.write(`wharf: ${(err as Error)?.message ?? err}\n`);
    return EXIT.failure;
  }
}

/** One line for a refusal by the domain: bad input names each field (exit 2); anything else is its message (exit 1). */
function failureLine(err: WharfError): number {
  const { code, message, details } = classify(err);
  if (code === 'validation_failed' && details.length) {
    process.stderr.write(`wharf: ${details.map((d) => `${d.path.slice(1)}: ${d.message}`).join('; ')}\n`);
    return EXIT.usage;
  }
  process.stderr.write(`wharf: ${message}\n`);
  return EXIT.failure;
}
