import type { Command } from 'commander';
import type { Db } from '../db/connect.ts';
import { findUser } from '../domain/accounts.ts';
import { listTokens, revokeToken, type TokenSummary } from '../domain/tokens.ts';
import { CliError, withDb, type RunWrapper } from './common.ts';

/** The live token a user's argument names: its id (digits) or its name, which must then be unambiguous. */
async function tokenNamed(db: Db, userId: number, login: string, which: string): Promise<TokenSummary> {
  const tokens = await listTokens(db, userId);
  if (/^\d+$/.test(which)) {
    const byId = tokens.find((t) => t.id === Number(which));
    if (byId) return byId;
  }
  const byName = tokens.filter((t) => t.name === which);
  if (byName.length === 1) return byName[0];
  if (byName.length > 1)
    throw new CliError(`${login} has ${byName.length} tokens named ${which} (ids ${byName.map((t) => t.id).join(', ')}): give the id of the one to revoke`);
  throw new CliError(`${login} has no live token with the id or name ${which}`);
}

/** `wharf token revoke <login> <id or name>`: revokes one of a user's tokens; prints its id and name, never a secret. */
export function tokenRevokeCommand(token: Command, run: RunWrapper) {
  token
    .command('revoke')
    .argument('<login>', 'the user whose token it is')
    .argument('<token>', "the token's id, or its name when only one of the user's tokens has it")
    .description("revoke one of a user's access tokens")
    .action((login: string, which: string) =>
      run(async () => {
        await withDb(async (db) => {
          const owner = await findUser(db, login);
          if (!owner) throw new CliError(`no user named ${login}`);
          const found = await tokenNamed(db, owner.id, login, which);
          await revokeToken(db, owner.id, found.id);
          process.stdout.write(`revoked token ${found.id} (${found.name}) of ${owner.login}\n`);
        });
      })(),
    );
}
