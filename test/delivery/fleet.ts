import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startServeProcess, type ServeProcess } from '../helpers/serveProcess.ts';
import type { TestLike } from '../helpers/wharf.ts';
import { connect } from '../../src/db/connect.ts';
import { recordEvents } from '../../src/events/outbox.ts';
import { useWebhookFanOut } from '../helpers/fanOut.ts';
import { type Received } from './receiver.ts';

/** One real `wharf serve` process of the fleet. */
export interface Node extends ServeProcess {
  /** The delivery attempts it logged so far (with LOG_LEVEL info). */
  attemptsLogged(): number;
}

/**
 * Real `wharf serve` processes on one database and one REPOS_DIR (as nodes of one
 * installation share them), each with a DATA_DIR of its own and the one SECRET_KEY, a repository `demo/app` with a webhook to `receiverUrl`,
 * and the test's own connection to the database for recording events and reading rows.
 */
export async function startFleet(t: TestLike, env: Record<string, string>, receiverUrl: string, options: { secondHookPath?: string; events?: string[] } = {}) {
  const events = options.events ?? ['issue'];
  // The nodes are child processes: this one records events itself, so it registers the fan-out the servers would.
  useWebhookFanOut();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-fleet-'));
  const database: TestDatabase = await createTestDatabase(dir);
  const base = {
    SECRET_KEY: randomBytes(32).toString('hex'),
    REPOS_DIR: path.join(dir, 'repos'),
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    WEBHOOK_ALLOWED_HOSTS: 'loopback',
    ...env,
  };
  const nodes = new Set<Node>();
  let count = 0;
  let db: Knex | undefined;
  t.teardown(async () => {
    for (const n of nodes) n.child.kill('SIGKILL');
    await Promise.all([...nodes].map((n) => n.exited));
    await db?.destroy();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts one more `wharf serve` and waits until it listens (and, on first start, printed its admin token). */
  async function serve(): Promise<Node & { token?: string }> {
    const started = await startServeProcess({ ...base, DATA_DIR: path.join(dir, `data-${++count}`) });
    const node: Node & { token?: string } = { ...started, attemptsLogged: () => started.output().split('"delivery attempt"').length - 1 };
    nodes.add(node);
    void started.exited.then(() => nodes.delete(node));
    return node;
  }

  const first = await serve();
  const api = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(first.url + p, {
      method,
      headers: { authorization: `Bearer ${first.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json().catch(() => null)) as any };
  };
  const repo = await api('POST', '/api/v1/orgs/demo/repos', { name: 'app' });
  if (repo.status !== 201) throw new Error(`repository not created: ${repo.status}`);
  const hook = await api('POST', '/api/v1/repos/demo/app/webhooks', { url: `${receiverUrl}/hook`, events });
  if (hook.status !== 201) throw new Error(`webhook not created: ${hook.status}`);
  const second = options.secondHookPath
    ? await api('POST', '/api/v1/repos/demo/app/webhooks', { url: `${receiverUrl}${options.secondHookPath}`, events })
    : undefined;
  if (second && second.status !== 201) throw new Error(`second webhook not created: ${second.status}`);
  const hookIds = [Number(hook.body.id), ...(second ? [Number(second.body.id)] : [])];
  db = connect(database.url);

  return {
    first,
    serve,
    hookId: Number(hook.body.id),
    /** The second webhook's id, when the fleet has one. */
    secondHookId: second ? Number(second.body.id) : undefined,
    secret: String(hook.body.secret),
    dialect: database.dialect,
    db,
    /** Records `n` issue events (one delivery each), as a producer would; the nodes find them by polling or NOTIFY. */
    async raise(n: number): Promise<void> {
      for (let i = 0; i < n; i += 1000) {
        const list = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({
          repositoryId: Number(repo.body.id),
          type: 'issue' as const,
          action: 'opened',
          senderId: null,
          payload: { action: 'opened', seq: i + k },
        }));
        await recordEvents(db!, list);
      }
    },
    /** How many event deliveries the webhooks have, and how many are still pending (one cheap query, for polling). */
    async counts(): Promise<{ total: number; pending: number }> {
      const [row] = await db!('deliveries')
        .whereIn('webhook_id', hookIds)
        .whereNot('event', 'ping')
        .select(db!.raw("count(*) AS total, sum(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending"));
      return { total: Number(row.total), pending: Number(row.pending ?? 0) };
    },
    /** The webhook's deliveries as rows, with their counts of attempts and of recorded attempt rows. */
    async deliveries(
      hookId = Number(hook.body.id),
    ): Promise<{ guid: string; status: string; attempts: number; recorded: number[]; recordedFailures: number[] }[]> {
      const rows = await db!('deliveries').where('webhook_id', hookId).whereNot('event', 'ping').select('id', 'guid', 'status', 'attempts');
      const attempts = await db!('delivery_attempts')
        .whereIn('delivery_id', db!('deliveries').where('webhook_id', hookId).select('id'))
        .select('delivery_id', 'attempt', 'status_code');
      const byId = new Map<number, number[]>();
      const failures = new Map<number, number[]>();
      for (const a of attempts) {
        byId.set(Number(a.delivery_id), [...(byId.get(Number(a.delivery_id)) ?? []), Number(a.attempt)]);
        if (!(a.status_code >= 200 && a.status_code < 300))
          failures.set(Number(a.delivery_id), [...(failures.get(Number(a.delivery_id)) ?? []), Number(a.attempt)]);
      }
      const sorted = (list: number[] = []) => list.sort((a, b) => a - b);
      return rows.map((r) => ({
        guid: r.guid,
        status: r.status,
        attempts: Number(r.attempts),
        recorded: sorted(byId.get(Number(r.id))),
        recordedFailures: sorted(failures.get(Number(r.id))),
      }));
    },
  };
}

/** Per guid, the attempt numbers a receiver saw, in arrival order (the creation ping left out); a guid is one webhook's delivery. */
export function attemptsByGuid(received: Pick<Received, 'event' | 'guid' | 'attempt'>[]): Map<string, number[]> {
  const by = new Map<string, number[]>();
  for (const r of received) if (r.event !== 'ping') by.set(r.guid, [...(by.get(r.guid) ?? []), r.attempt]);
  return by;
}

/** 1..n */
export const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
