import { sealWebhookSecret } from '../../src/webhooks/secret.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.ts';
import { startServer, type RunningServer, type WorkerFactory } from '../../src/server.ts';
import type { Mount } from '../../src/app.ts';

import { createTestDatabase, type TestDatabase } from './database.ts';
import { createOrg, createUser, findOrg, setMembership, type Role, type User } from '../../src/domain/accounts.ts';
import { issueToken } from '../../src/domain/tokens.ts';
import { createRepository, type Repository, type Visibility } from '../../src/domain/repos.ts';
import { pushesRecorded } from './wait.ts';

/** The part of a tap test the helpers use. */
export interface TestLike {
  teardown(fn: () => unknown): void;
}

/** A Wharf running in this process on a loopback port, with its own database and directories. */
export interface TestWharf {
  url: string;
  config: Config;
  running: RunningServer;
  dir: string;
  database: TestDatabase;
  adminToken: string;
  /** Every log line written so far, raw. */
  logs: string[];
  /** Calls the API and returns status, headers and parsed JSON (or text). */
  api(
    method: string,
    urlPath: string,
    options?: { token?: string | null; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> },
  ): Promise<ApiAnswer>;
  /**
   * Resolves once every push that has returned to its client is recorded as events (or parked):
   * no push record is left. Pushes are recorded just after they return.
   */
  pushesRecorded(): Promise<void>;
  stop(): Promise<void>;
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** Starts a Wharf for a test; it is stopped and its database dropped when the test ends. */
export async function startWharf(
  t: TestLike,
  options: { env?: Record<string, string>; config?: Partial<Config>; mounts?: Mount[]; workers?: WorkerFactory[] } = {},
): Promise<TestWharf> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-test-'));
  const database = await createTestDatabase(dir, { migrated: true });
  const config = loadConfig(
    {
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: path.join(dir, 'data'),
      REPOS_DIR: path.join(dir, 'repos'),
      DATABASE_URL: database.url,
      LOG_LEVEL: 'info',
      // Tests make many requests from one address: a quota they never reach (the rate limit's own tests set theirs).
      RATE_LIMIT: '1000000/1h',
      // Tests of attempt schedules make receivers fail many times in a row: a threshold they never reach (endpoint health's own tests set theirs).
      WEBHOOK_PAUSE_AFTER: '1000000',
      ...options.env,
    },
    { validateResponses: true, ...options.config },
  );
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const running = await startServer(config, { logDestination, mounts: options.mounts, workers: options.workers });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await running.stop();
  };
  t.teardown(async () => {
    await stop();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const adminToken = running.bootstrap!.token;
  const url = running.url;
  return {
    url,
    config: running.services.config,
    running,
    dir,
    database,
    adminToken,
    logs,
    stop,
    pushesRecorded: () => pushesRecorded(running.services.db),
    async api(method, urlPath, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      const token = opts.token === undefined ? adminToken : opts.token;
      if (token) headers.authorization = `Bearer ${token}`;
      let body: string | Buffer | undefined;
      if (opts.rawBody !== undefined) body = opts.rawBody;
      else if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + urlPath, { method, headers, body: body as BodyInit | undefined });
      const text = await res.text();
      let parsed: any = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
  };
}

/** Creates a user (optionally in an org with a role) and a token for them. */
export async function buildUser(w: TestWharf, login: string, membership?: { org: string; role: Role }): Promise<{ user: User; token: string }> {
  const db = w.running.services.db;
  const user = await createUser(db, login);
  if (membership) {
    const org = (await findOrg(db, membership.org)) ?? (await createOrg(db, membership.org));
    await setMembership(db, org.id, user.id, membership.role);
  }
  const issued = await issueToken(db, user.id, 'test');
  return { user, token: issued.token };
}

/** Creates an organization (if missing) and a repository in it. */
export async function buildRepo(w: TestWharf, org: string, name: string, visibility: Visibility = 'private'): Promise<Repository> {
  const db = w.running.services.db;
  const orgRow = (await findOrg(db, org)) ?? (await createOrg(db, org));
  return createRepository(w.running.services, { org: orgRow, name, visibility });
}

/**
 * Gives a repository an active webhook for every event type, so its events keep their
 * payloads (an event no webhook receives is stored without one) and a test can read them
 * in the outbox. Its URL is the discard port on loopback: attempts reach nothing.
 */
export async function listenToEvents(w: TestWharf, repo: Repository): Promise<void> {
  const now = Date.now();
  await w.running.services.db('webhooks').insert({
    repository_id: repo.id,
    url: 'http://127.0.0.1:9/events',
    secret: sealWebhookSecret(w.running.services.config, 'listener'),
    events: '["*"]',
    active: true,
    created_at: now,
    updated_at: now,
  });
}
