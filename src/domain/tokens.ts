import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/connect.ts';
import type { User } from './accounts.ts';
import { insertedId } from '../db/results.ts';

/** A freshly issued token: the secret value exists only here, shown once. */
export interface IssuedToken {
  id: number;
  name: string;
  token: string;
  expires_at: string | null;
  created_at: string;
}

/** SHA-256 of a token; only this is stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Issues a new token for a user; `expiresInMs` undefined means it never expires. */
export async function issueToken(db: Db, userId: number, name: string, expiresInMs?: number): Promise<IssuedToken> {
  const token = `wharf_${randomBytes(32).toString('base64url')}`;
  const now = Date.now();
  const expiresAt = expiresInMs === undefined ? null : now + expiresInMs;
  const [row] = await db('access_tokens')
    .insert({ user_id: userId, name, token_hash: hashToken(token), expires_at: expiresAt, created_at: now })
    .returning('id');
  return {
    id: insertedId(row),
    name,
    token,
    expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
    created_at: new Date(now).toISOString(),
  };
}

/** The user a token belongs to, or null when it is unknown, expired or revoked. */
export async function userForToken(db: Db, token: string): Promise<User | null> {
  if (!token || token.length > 200) return null;
  const hash = hashToken(token);
  const row = await db('access_tokens as t')
    .join('users as u', 'u.id', 't.user_id')
    .where('t.token_hash', hash)
    .first('t.id as token_id', 't.token_hash', 't.expires_at', 't.revoked_at', 't.last_used_at', 'u.id', 'u.login', 'u.is_admin', 'u.created_at');
  if (!row) return null;
  // The lookup is by hash; compare again in constant time so no timing tells how much matched.
  if (!timingSafeEqual(Buffer.from(row.token_hash), Buffer.from(hash))) return null;
  const now = Date.now();
  if (row.revoked_at !== null || (row.expires_at !== null && Number(row.expires_at) <= now)) return null;
  // Recording last use at most once a minute keeps reads from turning into writes.
  if (row.last_used_at === null || now - Number(row.last_used_at) > 60_000) {
    await db('access_tokens').where('id', row.token_id).update({ last_used_at: now });
  }
  return { id: row.id, login: row.login, is_admin: Boolean(row.is_admin), created_at: Number(row.created_at), token_id: row.token_id };
}

/** Revokes one of a user's tokens; false when the user has no such live token. */
export async function revokeToken(db: Db, userId: number, tokenId: number): Promise<boolean> {
  const n = await db('access_tokens').where({ id: tokenId, user_id: userId }).whereNull('revoked_at').update({ revoked_at: Date.now() });
  return n > 0;
}

/** A token as its owner's list shows it: never the secret, nor its hash. */
export interface TokenSummary {
  id: number;
  name: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

/** A user's tokens that are not revoked (expired ones included, so their owner sees them end), newest first. */
export async function listTokens(db: Db, userId: number): Promise<TokenSummary[]> {
  const rows = await db('access_tokens')
    .where('user_id', userId)
    .whereNull('revoked_at')
    .orderBy('id', 'desc')
    .select('id', 'name', 'created_at', 'expires_at', 'last_used_at');
  const time = (v: unknown) => (v === null ? null : Number(v));
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.name,
    created_at: Number(r.created_at),
    expires_at: time(r.expires_at),
    last_used_at: time(r.last_used_at),
  }));
}
