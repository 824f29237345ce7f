import type { Config } from '../config.ts';
import type { Db } from '../db/connect.ts';
import { createOrg, createUser } from './accounts.ts';
import { issueToken } from './tokens.ts';

export interface BootstrapResult {
  login: string;
  org: string;
  token: string;
}

/** On an empty database: creates user `admin` (site admin), org `demo` owned by it, and a token shown once. */
export async function bootstrap(db: Db, _config: Config): Promise<BootstrapResult | null> {
  const any = await db('users').first('id');
  if (any) return null;
  const admin = await createUser(db, 'admin', true);
  await createOrg(db, 'demo', admin.id);
  const issued = await issueToken(db, admin.id, 'bootstrap');
  return { login: admin.login, org: 'demo', token: issued.token };
}
