import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { issueToken } from '../../src/domain/tokens.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { connect } from '../../src/db/connect.ts';
import { open } from '../../src/secrets/cipher.ts';
import type { TestLike } from '../helpers/wharf.ts';

/** A database and a DATA_DIR of a test's own, as environment variables for wharf; removed when the test ends. */
export async function installation(t: TestLike): Promise<Record<string, string>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-secrets-'));
  const database = await createTestDatabase(dir);
  t.teardown(async () => {
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    DATA_DIR: path.join(dir, 'data'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: database.url,
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: '0',
    WEBHOOK_ALLOWED_HOSTS: 'loopback',
    IMPORT_ALLOWED_HOSTS: 'loopback',
  };
}

/** Starts Wharf in this process on an installation (first start or not); an admin token, its log lines; stopped when the test ends. */
export async function serveOn(
  t: TestLike,
  env: Record<string, string>,
): Promise<{
  running: RunningServer;
  token: string;
  logs: string[];
  api: (method: string, p: string, body?: unknown) => Promise<{ status: number; text: string; body: any }>;
}> {
  const logs: string[] = [];
  const logDestination = new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) });
  const running = await startServer(loadConfig(env), { logDestination });
  t.teardown(() => running.stop());
  const admin = await running.services.db('users').where('login', 'admin').first();
  const { token } = await issueToken(running.services.db, admin.id, 'test');
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(running.url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  };
  return { running, token, logs, api };
}

/** What the database holds, opened with a key: webhook secrets, import passwords, the check text. */
export async function openAll(env: Record<string, string>, key: Buffer) {
  const db = connect(env.DATABASE_URL);
  try {
    const hooks = await db('webhooks').select('secret');
    const jobs = await db('import_jobs').whereNotNull('credentials').select('credentials');
    const check = await db('settings').where('name', 'secret_key_check').first();
    return {
      secrets: hooks.map((h) => open(key, 'webhooks.secret', h.secret)),
      passwords: jobs.map((j) => JSON.parse(open(key, 'import_jobs.credentials', j.credentials)).password),
      check: open(key, 'settings.secret_key_check', check.value),
    };
  } finally {
    await db.destroy();
  }
}
