import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { addBulk } from '../import/helpers.ts';
import { HAS_STRACE, syncedIn, traceFileCalls } from '../helpers/strace.ts';
import { servedPush } from '../helpers/servedPush.ts';

// The backend's git writes a pushed pack without its own fsync; the pre-receive hook writes
// it to disk beside its checks (transport/git/hooks.ts). This shows, from the system calls
// of a real `wharf serve`, that the pack and its index are on disk before the push's ref moves,
// and, on SQLite, that the push record is on disk before `git push` returns.

/** A served push (servedPush) whose work tree has 120 objects: above git's unpack limit, so the push arrives as a pack git keeps. */
async function pushSetup(t: Test) {
  const setup = await servedPush(t, 'push-durable');
  await addBulk(setup.g, setup.work, 40, 1024);
  return setup;
}

t.test(
  'a pushed pack is on disk (fsync of the pack and its index) before the ref moves',
  { skip: HAS_STRACE ? false : 'strace is not installed' },
  async (t) => {
    const { dir, node, g, work, url } = await pushSetup(t);
    const trace = await traceFileCalls(t, node.child.pid!, dir);
    await g.ok(['push', '-q', url, 'main'], { cwd: work });
    const lines = await trace.stop();

    const repo = path.join(dir, 'repos', 'demo', 'app.git');
    const movedAt = lines.findIndex((line) => /rename/.test(line) && /\/refs\/heads\/main"/.test(line));
    t.ok(movedAt > 0, 'the push moved refs/heads/main');
    // receive-pack names the quarantine's files relative to the repository.
    const synced = syncedIn(lines.slice(0, movedAt), repo);
    const packs = fs.readdirSync(path.join(repo, 'objects', 'pack'));
    t.same(packs.map((name) => path.extname(name)).sort(), ['.idx', '.pack'], 'the push left one pack and its index');
    for (const name of packs) t.ok(synced(path.join(repo, 'objects', 'pack', name)), `objects/pack/${name} written to disk before the ref moved`);
  },
);

// SQLite in WAL mode commits to its -wal file; with `synchronous = NORMAL` that file is
// written to disk only at a checkpoint, so a power cut after `git push` returned could
// take the push record (and the events owed) with it. Every connection runs FULL (db/connect.ts).
t.test(
  'on SQLite, the push record is on disk (fsync of the write-ahead log) before git push returns',
  { skip: !HAS_STRACE ? 'strace is not installed' : process.env.TEST_DATABASE_URL?.startsWith('postgres') ? 'SQLite only' : false },
  async (t) => {
    const { dir, database, node, g, work, url } = await pushSetup(t);
    const wal = `${path.resolve(database.url.slice('sqlite:'.length))}-wal`;
    const trace = await traceFileCalls(t, node.child.pid!, dir);
    await g.ok(['push', '-q', url, 'main'], { cwd: work });
    const lines = await trace.stop();

    const movedAt = lines.findIndex((line) => /rename/.test(line) && /\/refs\/heads\/main"/.test(line));
    t.ok(movedAt > 0, 'the push moved refs/heads/main');
    t.ok(syncedIn(lines.slice(movedAt))(wal), 'the write-ahead log was written to disk after the ref moved, before the push returned');
  },
);
