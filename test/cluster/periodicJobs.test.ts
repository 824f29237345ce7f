// Periodic jobs with three real `wharf serve` processes on one Postgres database: each
// runs on one node per period, not on every node.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createTestDatabase, postgresUrl } from '../helpers/database.ts';
import { serveEnv, startServeProcess } from '../helpers/serveProcess.ts';

const PERIOD_MS = 1000;

t.test(
  'three nodes prune finished deliveries once per period between them, not once each',
  { skip: postgresUrl ? false : 'several nodes need one shared Postgres database (set TEST_DATABASE_URL); SQLite is one node' },
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-periodic-'));
    const database = await createTestDatabase(dir);
    t.teardown(async () => {
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const key = randomBytes(32).toString('hex');
    const env = (n: number) =>
      serveEnv(path.join(dir, `node${n}`), database.url, {
        REPOS_DIR: path.join(dir, 'repos'),
        SECRET_KEY: key,
        LOG_LEVEL: 'info',
        DELIVERY_PRUNE_EVERY: `${PERIOD_MS}ms`,
      });
    // The first migrates the database; the other two start beside each other.
    const first = await startServeProcess(env(1), { t });
    const nodes = [first, ...(await Promise.all([startServeProcess(env(2), { t }), startServeProcess(env(3), { t })]))];
    const from = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 6 * PERIOD_MS));
    const to = Date.now();
    // Every pass is logged (with how many deliveries went, often none): the passes of all three, in time order.
    const passes = nodes
      .flatMap((node, i) =>
        node
          .output()
          .split('\n')
          .filter((line) => line.includes('"pruned finished deliveries"'))
          .map((line) => ({ node: i + 1, at: Number(JSON.parse(line).time) })),
      )
      .filter((p) => p.at >= from && p.at <= to)
      .sort((a, b) => a.at - b.at);
    const periods = (to - from) / PERIOD_MS;
    t.ok(passes.length >= periods - 2, `pruning ran (${passes.length} passes in ${periods.toFixed(1)} periods)`);
    t.ok(passes.length <= periods + 1, `at most one pass a period between the three nodes: ${passes.length} in ${periods.toFixed(1)} periods`);
    const gaps = passes.slice(1).map((p, i) => p.at - passes[i].at);
    t.ok(
      gaps.every((gap) => gap >= PERIOD_MS * 0.9),
      `passes a period apart: ${JSON.stringify(passes.map((p) => `${p.node}@${p.at - from}`))}`,
    );
  },
);
