import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.ts';

/** A signed-in browser: who it is and the API token it acts with. */
export interface UiSession {
  /** The random value of the session cookie. */
  id: string;
  userId: number;
  login: string;
  token: string;
  /** True when this request extended the session's life (the cookie is then sent again with a new Max-Age). */
  renewed: boolean;
}

/** Sessions end after this long without a request. */
export const SESSION_IDLE_MS = 14 * 24 * 3600 * 1000;
const TOUCH_EVERY_MS = 60_000;
const ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function idHash(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

// The encryption key comes from the cookie value itself: the server keeps no key that
// would unlock every stored token at once, and a copy of the table unlocks none.
function keyOf(id: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(id, 'utf8'), Buffer.alloc(0), 'wharf ui session token', 32));
}

function seal(id: string, token: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(id), iv);
  const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function open(id: string, box: string): string | null {
  try {
    const bytes = Buffer.from(box, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(id), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null; // a tampered row or a wrong key: no session
  }
}

/** A new random session id, in the form stored in the cookie. */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

/** Creates a session for a user and token; returns the cookie value. Expired sessions are swept at the same time. */
export async function createSession(db: Db, user: { id: number; login: string }, token: string): Promise<string> {
  const id = newSessionId();
  const now = Date.now();
  await db('ui_sessions').where('expires_at', '<', now).delete();
  await db('ui_sessions').insert({
    id_hash: idHash(id),
    user_id: user.id,
    login: user.login,
    token_box: seal(id, token),
    created_at: now,
    last_seen_at: now,
    expires_at: now + SESSION_IDLE_MS,
  });
  return id;
}

/** The live session of a cookie value, or null; extends its life at most once a minute. */
export async function loadSession(db: Db, id: string | undefined): Promise<UiSession | null> {
  if (!id || !ID_PATTERN.test(id)) return null;
  const row = await db('ui_sessions').where('id_hash', idHash(id)).first();
  const now = Date.now();
  if (!row || Number(row.expires_at) <= now) return null;
  const token = open(id, row.token_box);
  if (token === null) return null;
  const renewed = now - Number(row.last_seen_at) > TOUCH_EVERY_MS;
  if (renewed)
    await db('ui_sessions')
      .where('id_hash', row.id_hash)
      .update({ last_seen_at: now, expires_at: now + SESSION_IDLE_MS });
  return { id, userId: row.user_id, login: row.login, token, renewed };
}

/** Ends a session (sign out, or its token stopped working). */
export async function destroySession(db: Db, id: string): Promise<void> {
  await db('ui_sessions').where('id_hash', idHash(id)).delete();
}
