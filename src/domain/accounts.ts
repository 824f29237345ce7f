import type { Db } from '../db/connect.ts';
import type { DbBool, DbInt } from '../db/rows.ts';

/** An authenticated user. */
export interface User {
  id: number;
  login: string;
  is_admin: boolean;
  created_at: number;
  token_id?: number;
}

export type Role = 'owner' | 'member';

export interface Org {
  id: number;
  name: string;
  created_at: number;
}

/** A `users` row as either driver gives it. */
interface UserRow {
  id: number;
  login: string;
  is_admin: DbBool;
  created_at: DbInt;
}

function toUser(row: UserRow): User {
  return { id: row.id, login: row.login, is_admin: Boolean(row.is_admin), created_at: Number(row.created_at) };
}

/** Creates a user. */
export async function createUser(db: Db, login: string, isAdmin = false): Promise<User> {
  const now = Date.now();
  const [row] = await db('users').insert({ login, is_admin: isAdmin, created_at: now }).returning('*');
  return toUser(row);
}

/** A user by login, or undefined. */
export async function findUser(db: Db, login: string): Promise<User | undefined> {
  const row = await db('users').where({ login }).first();
  return row ? toUser(row) : undefined;
}

/** Creates an organization, making `ownerId` (when given) its owner, in one transaction. */
export async function createOrg(db: Db, name: string, ownerId?: number): Promise<Org> {
  return db.transaction(async (trx) => {
    const [row] = await trx('orgs').insert({ name, created_at: Date.now() }).returning('*');
    if (ownerId !== undefined) await trx('memberships').insert({ org_id: row.id, user_id: ownerId, role: 'owner' });
    return { id: row.id, name: row.name, created_at: Number(row.created_at) };
  });
}

/** An organization by name, or undefined. */
export async function findOrg(db: Db, name: string): Promise<Org | undefined> {
  const row = await db('orgs').where({ name }).first();
  return row ? { id: row.id, name: row.name, created_at: Number(row.created_at) } : undefined;
}

/** An organization by id, or undefined. */
export async function orgById(db: Db, id: number): Promise<Org | undefined> {
  const row = await db('orgs').where({ id }).first();
  return row ? { id: Number(row.id), name: row.name, created_at: Number(row.created_at) } : undefined;
}

/** Adds a user to an organization, or changes their role if already a member. */
export async function setMembership(db: Db, orgId: number, userId: number, role: Role): Promise<void> {
  await db('memberships').insert({ org_id: orgId, user_id: userId, role }).onConflict(['org_id', 'user_id']).merge({ role });
}

/** A user's role in an organization, or null. Site admins count as owners everywhere. */
export async function roleIn(db: Db, orgId: number, user: User | null): Promise<Role | null> {
  if (!user) return null;
  if (user.is_admin) return 'owner';
  const row = await db('memberships').where({ org_id: orgId, user_id: user.id }).first('role');
  return row ? row.role : null;
}

/** The organizations a user acts in, with the role: every one for a site administrator (who owns them all, as roleIn says), else their memberships. */
export async function orgsFor(db: Db, user: User): Promise<{ name: string; role: Role }[]> {
  if (!user.is_admin) return orgsOf(db, user.id);
  const names: { name: string }[] = await db('orgs').orderBy('name').select('name');
  return names.map(({ name }) => ({ name, role: 'owner' }));
}

/** Organizations a user belongs to, with the role. */
export async function orgsOf(db: Db, userId: number): Promise<{ name: string; role: Role }[]> {
  return db('memberships as m').join('orgs as o', 'o.id', 'm.org_id').where('m.user_id', userId).orderBy('o.name').select('o.name', 'm.role');
}
