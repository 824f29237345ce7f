// Wharf on the Node.js it runs on (24 and 22 LTS): started and stopped many times in a
// row with SQLite, each start delivering a ping through the dispatcher's SQLite thread,
// never aborts; an older Node is refused at once with one line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { runCli, WHARF_BIN } from '../helpers/cli.ts';
import { serveEnv, startServeProcess } from '../helpers/serveProcess.ts';
import { postgresUrl } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from '../delivery/receiver.ts';
import { unsupportedNode } from '../../bin/nodeVersion.js';

// better-sqlite3 12 aborted 9 starts of 10 on Node 24: eight starts in a row all passing by
// chance would be one in a hundred million.
const STARTS = 8;

// SQLite is what the native driver is loaded for: on Postgres this file would repeat the
// SQLite suite's run, so it runs once, in the SQLite suite.
t.test(
  `${STARTS} starts and stops on SQLite, each delivering a ping: no abort, exit 0 on SIGTERM`,
  { skip: postgresUrl && 'runs in the SQLite suite' },
  async (t) => {
    const receiver = await startReceiver(t);
    for (let i = 1; i <= STARTS; i++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-node-'));
      t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
      const env = serveEnv(dir, `sqlite:${path.join(dir, 'data', 'wharf.sqlite')}`);
      const node = await startServeProcess(env, { t, timeoutMs: 30_000 });
      const answer = await fetch(`${node.url}/api/v1/orgs/demo/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${node.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${receiver.url}/start-${i}`, events: ['repository'] }),
      });
      t.equal(answer.status, 201, `start ${i}: webhook created`);
      await waitFor(() => receiver.received.some((r) => r.path === `/start-${i}` && r.event === 'ping'), { timeoutMs: 20_000 });
      const code = await node.stop();
      const stderr = node.errors();
      t.equal(code, 0, `start ${i}: exit 0 on SIGTERM`);
      t.notMatch(stderr, /Assertion failed|Aborted|Segmentation/, `start ${i}: nothing aborted`);
    }
  },
);

t.test('the Node version guard: 22.19 and newer run, older is refused in one line', async (t) => {
  t.equal(unsupportedNode('24.21.0'), null);
  t.equal(unsupportedNode('22.19.0'), null);
  t.equal(unsupportedNode('22.23.3'), null);
  t.equal(unsupportedNode('26.1.0'), null);
  for (const old of ['22.18.0', '22.0.0', '20.20.2', '21.7.3', '18.0.0']) {
    t.equal(unsupportedNode(old), `wharf: Node.js ${old} is not supported: run Wharf on Node.js 24, or 22.19 or newer (LTS)`, old);
  }
  t.equal(unsupportedNode(process.versions.node), null, 'the Node running the suite is supported');
});

// A real older Node, where the machine has one (the suite itself runs on a supported one).
const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((bin) => {
  const run = spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return run.status === 0 && unsupportedNode(run.stdout.trim()) !== null;
});

t.test('an older Node refuses every command at once with one line', { skip: !oldNode && 'no Node older than 22.19 on this machine' }, async (t) => {
  for (const args of [['serve'], ['migrate'], ['org', 'create', 'acme'], ['--version']]) {
    const run = spawnSync(oldNode!, [WHARF_BIN, ...args], { encoding: 'utf8', env: { ...process.env, DATA_DIR: '/nonexistent' } });
    t.equal(run.status, 1, `${args.join(' ')}: exit 1`);
    t.equal(run.stdout, '', 'nothing on stdout');
    t.match(
      run.stderr,
      /^wharf: Node\.js \d+\.\d+\.\d+ is not supported: run Wharf on Node\.js 24, or 22\.19 or newer \(LTS\)\n$/,
      'one line naming the Node it needs',
    );
  }
  // The same CLI on the Node running the suite works.
  t.equal((await runCli(['--version'], {})).code, 0);
});
