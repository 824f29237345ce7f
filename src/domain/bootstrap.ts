import type { Config } from '../config.ts';
import type { Db } from '../db/connect.ts';
import { createOrg, createUser } from './accounts.ts';
import { issueToken } from './tokens.ts';
import { isUniqueViolation } from '../db/errors.ts';

export interface BootstrapResult {
  login: string;
  org: string;
  token: string;
}

/** On an empty database: creates user `admin` (site admin), org `demo` owned by it, and a token shown once. */
export async function bootstrap(db: Db, _config: Config): Promise<BootstrapResult | null> {
  const any = await db('users').first('id');
  if (any) return null;
  // Several processes may start on one empty Postgres at once: the unique login lets
  // exactly one of them create the admin, and the others carry on without a token.
  return db
    .transaction(async (trx) => {
      const admin = await createUser(trx, 'admin', true);
      await createOrg(trx, 'demo', admin.id);
      const issued = await issueToken(trx, admin.id, 'bootstrap');
      return { login: admin.login, org: 'demo', token: issued.token };
    })
    .catch((err) => {
      if (isUniqueViolation(err)) return null;
      throw err;
    });
}

/**
 * The login to name in "Sign in with a token: npx wharf token create <login>" while no
 * token has ever been used (a first start whose token was never seen, or lost): the first
 * site administrator's; null once any token has signed anything in, or when there is no
 * administrator. Every sign-in, API call and git request goes through userForToken, which
 * records a token's last use.
 */
export async function signInHint(db: Db): Promise<string | null> {
  const used = await db('access_tokens').whereNotNull('last_used_at').first('id');
  if (used) return null;
  const admin = await db('users').where('is_admin', true).orderBy('id').first('login');
  return admin ? String(admin.login) : null;
}
