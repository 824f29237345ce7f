import { InvalidArgumentError, Option, type Command } from 'commander';
import { npmBannerOnStdout } from '../config.ts';
import { createOrg, createUser, findOrg, findUser, setMembership } from '../domain/accounts.ts';
import { issueToken } from '../domain/tokens.ts';
import { orgMemberCommands } from './orgMembers.ts';
import { tokenRevokeCommand } from './tokenRevoke.ts';
import { parseDuration } from '../util/duration.ts';
import { CliError, nameArg, withDb, type RunWrapper } from './common.ts';

function durationArg(value: string): number {
  const ms = parseDuration(value);
  if (!ms) throw new InvalidArgumentError('a duration such as 30d, 12h or 90m');
  return ms;
}

/** `wharf org create|add-member|remove-member`, `wharf user create`, `wharf token create|revoke`. */
export function adminCommands(program: Command, run: RunWrapper) {
  const org = program.command('org').description('organizations');
  org
    .command('create')
    .argument('<org>', 'organization name', nameArg)
    .description('create an organization')
    .action((name: string) =>
      run(async () => {
        await withDb(async (db) => {
          if (await findOrg(db, name)) throw new CliError(`organization ${name} already exists`);
          await createOrg(db, name);
          process.stdout.write(`created organization ${name}\n`);
        });
      })(),
    );

  orgMemberCommands(org, run);

  const user = program.command('user').description('users');
  user
    .command('create')
    .argument('<login>', 'user login', nameArg)
    .description('create a user, optionally in an organization')
    .option('--org <org>', 'organization to join')
    .addOption(new Option('--role <role>', 'role in the organization').choices(['owner', 'member']).default('member'))
    .option('--admin', 'make the user a site administrator', false)
    .action((login: string, opts: { org?: string; role: 'owner' | 'member'; admin: boolean }) =>
      run(async () => {
        await withDb(async (db) => {
          const orgRow = opts.org ? await findOrg(db, opts.org) : undefined;
          if (opts.org && !orgRow) throw new CliError(`no organization named ${opts.org}`);
          if (await findUser(db, login)) throw new CliError(`user ${login} already exists`);
          const created = await createUser(db, login, opts.admin);
          if (orgRow) await setMembership(db, orgRow.id, created.id, opts.role);
          process.stdout.write(`created user ${login}${orgRow ? ` (${opts.role} of ${orgRow.name})` : ''}\n`);
        });
      })(),
    );

  const token = program.command('token').description('access tokens');
  token
    .command('create <login>')
    .description('issue an access token; prints the token alone')
    .option('--expires-in <duration>', 'lifetime such as 30d', durationArg)
    .option('--name <name>', 'a label for the token', 'cli')
    .action((login: string, opts: { expiresIn?: number; name: string }) =>
      run(async () => {
        await withDb(async (db) => {
          const owner = await findUser(db, login);
          if (!owner) throw new CliError(`no user named ${login}`);
          const issued = await issueToken(db, owner.id, opts.name, opts.expiresIn);
          process.stdout.write(`${issued.token}\n`);
          if (npmBannerOnStdout())
            process.stderr.write(
              `wharf: npm printed its "> wharf" banner on stdout before the token; to capture the token alone use npm run --silent wharf -- token create ${login} (or npx wharf token create ${login})\n`,
            );
        });
      })(),
    );
  tokenRevokeCommand(token, run);
}
