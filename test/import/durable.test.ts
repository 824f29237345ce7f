import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { serveEnv, startServeProcess } from '../helpers/serveProcess.ts';
import { gitClient } from '../helpers/git.ts';
import { buildSource, startGitDaemon } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';
import { HAS_STRACE, syncedIn, traceFileCalls } from '../helpers/strace.ts';

// An import's copy is cloned without git's own fsync (Wharf writes it out itself while git
// resolves deltas and beside the checks): this shows, from the system calls of a real
// `wharf serve`, that every file of the copy is written to disk before the copy is moved
// into REPOS_DIR, the step its success commits with.

t.test(
  'an imported copy is on disk (fsync of its packs, refs, HEAD and config) before it is moved in',
  { skip: HAS_STRACE ? false : 'strace is not installed' },
  async (t) => {
    const g = gitClient(t);
    const base = path.join(g.dir, 'served');
    fs.mkdirSync(base);
    const source = await buildSource(g, base);
    await g.ok(['repack', '-q'], { cwd: source.bare }); // one pack, so the copy arrives as a pack to index
    const daemon = await startGitDaemon(t, base);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-durable-'));
    const database = await createTestDatabase(dir);
    t.teardown(async () => {
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const node = await startServeProcess(serveEnv(dir, database.url, { IMPORT_ALLOWED_HOSTS: 'loopback' }), { t, timeoutMs: 30_000 });

    const trace = await traceFileCalls(t, node.child.pid!, dir);

    const res = await fetch(`${node.url}/api/v1/repos/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${node.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source_url: daemon.url('source'), target_org: 'demo', name: 'copy' }),
    });
    const created: any = await res.json();
    t.equal(res.status, 202, JSON.stringify(created));
    const job: any = await waitFor(
      async () => {
        const answer: any = await (await fetch(`${node.url}/api/v1/repos/import/${created.id}`, { headers: { authorization: `Bearer ${node.token}` } })).json();
        return answer.finished_at && answer;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'the import to finish' },
    );
    t.equal(job.status, 'succeeded', job.error);
    const lines = await trace.stop();

    const copy = path.join(dir, 'repos', '.imports', `job-${created.id}.git`);
    const movedAt = lines.findIndex((line) => /rename/.test(line) && line.includes(`"${copy}"`) && line.includes(path.join(dir, 'repos', 'demo', 'copy.git')));
    t.ok(movedAt > 0, 'the copy is moved into REPOS_DIR by one rename');
    const synced = syncedIn(lines.slice(0, movedAt));
    const packs = fs.readdirSync(path.join(dir, 'repos', 'demo', 'copy.git', 'objects', 'pack'));
    t.ok(
      packs.some((name) => name.endsWith('.pack')),
      'the copy holds a pack',
    );
    for (const name of packs) t.ok(synced(path.join(copy, 'objects', 'pack', name)), `objects/pack/${name} written to disk before the move`);
    for (const file of ['packed-refs', 'HEAD', 'config', 'objects/pack', 'objects', ''])
      t.ok(synced(path.join(copy, file)), `${file || 'its folder'} written to disk before the move`);
  },
);
