import fs from 'node:fs/promises';
import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { checkKey, loadKey } from '../secrets/boot.ts';
import { keyId } from '../secrets/cipher.ts';
import { commitKeyFile, discardStagedKeyFile, generateKey, keyFilePath, parseKey, stageKeyFile } from '../secrets/key.ts';
import { resealAll } from '../secrets/rotate.ts';
import { CliError, openServerDb, type RunWrapper } from './common.ts';

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

/** The new key: from a file, from stdin, or a fresh random one. */
async function newKeyFrom(opts: { newKeyFile?: string; newKeyStdin: boolean }): Promise<{ key: Buffer; generated: boolean }> {
  if (opts.newKeyFile !== undefined && opts.newKeyStdin) throw new CliError('give --new-key-file or --new-key-stdin, not both');
  let text: string | undefined;
  let from = 'stdin';
  if (opts.newKeyFile !== undefined) {
    from = opts.newKeyFile;
    text = await fs.readFile(opts.newKeyFile, 'utf8').catch((err: Error) => {
      throw new CliError(`--new-key-file: ${err.message}`);
    });
  } else if (opts.newKeyStdin) text = await readStdin();
  if (text === undefined) return { key: generateKey(), generated: true };
  const key = parseKey(text);
  if (!key) throw new CliError(`the new key (${from}) is not 64 hexadecimal characters`);
  return { key, generated: false };
}

/**
 * `wharf rotate-key`: re-seals every stored secret with a new key in one transaction.
 * The current key is found as `wharf serve` finds it (SECRET_KEY, else DATA_DIR/secret.key);
 * a key kept in DATA_DIR is replaced there, one given by SECRET_KEY is the operator's to change.
 */
export function rotateKeyCommand(program: Command, run: RunWrapper) {
  program
    .command('rotate-key')
    .description('re-encrypt the stored webhook secrets and import credentials with a new SECRET_KEY (stop every node first)')
    .option('--new-key-file <path>', 'read the new key (64 hex characters) from this file')
    .option('--new-key-stdin', 'read the new key (64 hex characters) from stdin', false)
    .action((opts: { newKeyFile?: string; newKeyStdin: boolean }) =>
      run(async () => {
        const config = loadConfig();
        const next = await newKeyFrom(opts);
        const db = await openServerDb(config);
        try {
          const current = await loadKey(config, db, false);
          await checkKey(config, db, current);
          if (next.key.equals(current.key)) throw new CliError('the new key is the current key');
          // The new key reaches the disk before the database depends on it.
          if (current.inDataDir) await stageKeyFile(config.dataDir, next.key);
          let counts;
          try {
            counts = await resealAll(db, current.key, next.key);
          } catch (err) {
            if (current.inDataDir) await discardStagedKeyFile(config.dataDir);
            throw err;
          }
          if (current.inDataDir) await commitKeyFile(config.dataDir);
          const summary = Object.entries(counts)
            .map(([column, n]) => `${n} ${column}`)
            .join(', ');
          process.stderr.write(`Re-encrypted ${summary} with key id ${keyId(next.key)} (was ${keyId(current.key)}).\n`);
          if (current.inDataDir) {
            process.stderr.write(
              `The new key is in ${keyFilePath(config.dataDir)}. Every other node of this database: copy that file into its DATA_DIR (mode 0600) or set SECRET_KEY to its contents, then start it; a node with the old key refuses to start.\n`,
            );
          } else {
            // SECRET_KEY lives outside Wharf: the operator must carry the new key to every node.
            if (next.generated) process.stdout.write(`${next.key.toString('hex')}\n`);
            process.stderr.write(
              `SECRET_KEY still holds the old key: set it to the new key${next.generated ? ' (printed on stdout)' : ''} on this node and every other node of this database, then start them; a node with the old key refuses to start.\n`,
            );
          }
        } finally {
          await db.destroy();
        }
      })(),
    );
}
