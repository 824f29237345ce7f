import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { serveEnv, startServeProcess } from '../helpers/serveProcess.ts';
import { gitClient } from '../helpers/git.ts';
import { buildSource, startGitDaemon } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

// An import's copy is cloned without git's own fsync (Wharf writes it out itself while git
// resolves deltas and beside the checks): this shows, from the system calls of a real
// `wharf serve`, that every file of the copy is written to disk before the copy is moved
// into REPOS_DIR, the step its success commits with.
const strace = spawnSync('strace', ['-V']).status === 0;

t.test(
  'an imported copy is on disk (fsync of its packs, refs, HEAD and config) before it is moved in',
  { skip: strace ? false : 'strace is not installed' },
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

    const log = path.join(dir, 'strace.log');
    const tracer = spawn('strace', ['-f', '-y', '-e', 'trace=fsync,fdatasync,link,linkat,rename,renameat,renameat2', '-o', log, '-p', String(node.child.pid)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const traced = new Promise((resolve) => tracer.on('close', resolve));
    t.teardown(() => {
      tracer.kill('SIGKILL');
    });
    let said = '';
    tracer.stderr!.on('data', (c) => (said += c));
    await waitFor(() => /attached/.test(said), { timeoutMs: 10_000, what: 'strace to attach' });

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
    tracer.kill('SIGINT'); // detaches; the log is complete once it exits
    await traced;

    const copy = path.join(dir, 'repos', '.imports', `job-${created.id}.git`);
    const lines = fs.readFileSync(log, 'utf8').split('\n');
    const movedAt = lines.findIndex((line) => /rename/.test(line) && line.includes(`"${copy}"`) && line.includes(path.join(dir, 'repos', 'demo', 'copy.git')));
    t.ok(movedAt > 0, 'the copy is moved into REPOS_DIR by one rename');
    const before = lines.slice(0, movedAt);
    const syncedNames = new Set(
      // A call cut off by another thread's is printed as `fsync(3</path> <unfinished ...>`, its result later.
      before.map((line) => /f(?:data)?sync\(\d+<([^>]+)>(?:\) = 0| <unfinished)/.exec(line)?.[1]).filter(Boolean),
    );
    // git writes a pack as tmp_pack_* and links it to its name (or renames a lock file into place): a file counts as written under any name it had.
    const earlier = new Map(
      before.flatMap((line) =>
        [...line.matchAll(/(?:link|rename)(?:at2?)?\((?:\d+<[^>]*>, )?"([^"]+)", (?:\d+<[^>]*>, )?"([^"]+)"/g)].map((m) => [m[2], m[1]] as const),
      ),
    );
    const synced = (file: string): boolean => {
      for (let name: string | undefined = path.join(copy, file), hops = 0; name && hops < 10; name = earlier.get(name), hops++)
        if (syncedNames.has(name)) return true;
      return false;
    };
    const packs = fs.readdirSync(path.join(dir, 'repos', 'demo', 'copy.git', 'objects', 'pack'));
    t.ok(
      packs.some((name) => name.endsWith('.pack')),
      'the copy holds a pack',
    );
    for (const name of packs) t.ok(synced(path.join('objects', 'pack', name)), `objects/pack/${name} written to disk before the move`);
    for (const file of ['packed-refs', 'HEAD', 'config', 'objects/pack', 'objects', '.']) t.ok(synced(file), `${file} written to disk before the move`);
  },
);
