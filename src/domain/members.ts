import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { conflict } from '../errors/wharfError.ts';
import type { Org, Role } from './accounts.ts';

/** One member of an organization as its members page and `GET /orgs/{org}/members` show it. */
export interface Member {
  login: string;
  role: Role;
}

/** The refusal of a change that would take away an organization's last owner (the same words on every surface). */
export const LAST_OWNER = 'An organization keeps at least one owner: make another member an owner first';

/** The members of an organization with their roles, owners first, then by login. */
export async function listMembers(db: Db, org: Org): Promise<Member[]> {
  const rows: Member[] = await db('memberships as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.org_id', org.id)
    .orderByRaw("case when m.role = 'owner' then 0 else 1 end")
    .orderBy('u.login')
    .select('u.login', 'm.role');
  return rows.map((r) => ({ login: r.login, role: r.role }));
}

/** A user's membership role in an organization (site administrators not counted as owners here), or null. */
export async function memberRole(db: Db, orgId: number, userId: number): Promise<Role | null> {
  const row = await db('memberships').where({ org_id: orgId, user_id: userId }).first('role');
  return row ? row.role : null;
}

/**
 * Runs a membership change of one organization in a transaction and refuses it (rolled back)
 * when it took away the last owner the organization had. Postgres: the organization's row
 * is locked first, so two owners demoting each other at once cannot both see the other
 * still there; SQLite serializes writers already.
 */
async function keepingAnOwner<T>(db: Db, orgId: number, change: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    if (isPostgres(trx)) await trx('orgs').where('id', orgId).forUpdate().first('id');
    const owners = async () => Number((await trx('memberships').where({ org_id: orgId, role: 'owner' }).count({ n: '*' }))[0].n);
    const before = await owners();
    const result = await change(trx);
    if (before > 0 && (await owners()) === 0) throw conflict(LAST_OWNER);
    return result;
  });
}

/** Adds a user to an organization or changes their role; refused when it demotes the last owner. */
export async function setMemberRole(db: Db, orgId: number, userId: number, role: Role): Promise<void> {
  await keepingAnOwner(db, orgId, (trx) =>
    trx('memberships').insert({ org_id: orgId, user_id: userId, role }).onConflict(['org_id', 'user_id']).merge({ role }),
  );
}

/** Changes a member's role; false when the user is not a member. Refused when it demotes the last owner. */
export async function changeMemberRole(db: Db, orgId: number, userId: number, role: Role): Promise<boolean> {
  return keepingAnOwner(db, orgId, async (trx) => (await trx('memberships').where({ org_id: orgId, user_id: userId }).update({ role })) > 0);
}

/** Removes a member; false when the user is not a member. Refused when they are the last owner. */
export async function removeMember(db: Db, orgId: number, userId: number): Promise<boolean> {
  return keepingAnOwner(db, orgId, async (trx) => (await trx('memberships').where({ org_id: orgId, user_id: userId }).delete()) > 0);
}
