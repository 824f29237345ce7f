import { Option, type Command } from 'commander';
import type { Db } from '../db/connect.ts';
import { findOrg, findUser, type Org, type User } from '../domain/accounts.ts';
import { removeMember, setMemberRole } from '../domain/members.ts';
import { CliError, nameArg, withDb, type RunWrapper } from './common.ts';

/** The organization and user a membership command names, or a one-line refusal. */
async function orgAndUser(db: Db, orgName: string, login: string): Promise<{ org: Org; user: User }> {
  const org = await findOrg(db, orgName);
  if (!org) throw new CliError(`no organization named ${orgName}`);
  const user = await findUser(db, login);
  if (!user) throw new CliError(`no user named ${login}`);
  return { org, user };
}

/**
 * `wharf org add-member` and `wharf org remove-member`: the same domain calls as the API's
 * member routes, so the last owner can be neither demoted nor removed here either (the
 * domain's refusal is printed by main() and exits 1).
 */
export function orgMemberCommands(org: Command, run: RunWrapper) {
  org
    .command('add-member')
    .argument('<org>', 'organization name', nameArg)
    .argument('<login>', 'an existing user', nameArg)
    .description('add an existing user to an organization, or change their role')
    .addOption(new Option('--role <role>', 'role in the organization').choices(['owner', 'member']).default('member'))
    .action((orgName: string, login: string, opts: { role: 'owner' | 'member' }) =>
      run(async () => {
        await withDb(async (db) => {
          const { org: found, user } = await orgAndUser(db, orgName, login);
          await setMemberRole(db, found.id, user.id, opts.role);
          process.stdout.write(`${user.login} is now ${opts.role === 'owner' ? 'an owner' : 'a member'} of ${found.name}\n`);
        });
      })(),
    );

  org
    .command('remove-member')
    .argument('<org>', 'organization name', nameArg)
    .argument('<login>', 'a member of the organization', nameArg)
    .description('remove a user from an organization')
    .action((orgName: string, login: string) =>
      run(async () => {
        await withDb(async (db) => {
          const { org: found, user } = await orgAndUser(db, orgName, login);
          if (!(await removeMember(db, found.id, user.id))) throw new CliError(`${user.login} is not a member of ${found.name}`);
          process.stdout.write(`removed ${user.login} from ${found.name}\n`);
        });
      })(),
    );
}
