import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { gitClient, refList } from '../helpers/git.ts';
import { addBulk } from '../import/helpers.ts';
import { HAS_STRACE, traceFileCalls } from '../helpers/strace.ts';
import { servedPush } from '../helpers/servedPush.ts';
import { notePushTips, pushTips } from '../../src/transport/git/pushTips.ts';
import { PassThrough } from 'node:stream';
import { writeHooksDir } from '../../src/transport/git/hooks.ts';
import { spawnSync } from 'node:child_process';
import { preparePushLogs, pushLogDir, pushWalkDir } from '../../src/pushes/log.ts';

// A push's .gitmodules walk and the writing of its pack to disk start beside receive-pack's
// connectivity check (the alternate-refs script, transport/git/hooks.ts), from the tips the
// route read off the request (pushTips.ts); the pre-receive hook takes that walk only when it
// read the same tips itself, and walks again otherwise.

const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const ZERO = '0'.repeat(40);

t.test("a push body's commands give their new ids, deletions left out, once the flush packet is there", async (t) => {
  const body = Buffer.from(
    pkt(`shallow ${C}\n`) +
      pkt(`${ZERO} ${A} refs/heads/main\0 report-status side-band-64k\n`) +
      pkt(`${A} ${ZERO} refs/heads/gone\n`) +
      pkt(`${C} ${B} refs/tags/v1\n`) +
      '0000PACK\0\0\0\x02',
  );
  t.same(pushTips(body), [A, B]);
  const cuts = [...Array(body.indexOf('0000PACK') + 4).keys()];
  t.same(
    cuts.filter((cut) => pushTips(body.subarray(0, cut)) !== undefined),
    [],
    'before the flush packet, more is needed at every length',
  );
  t.same(pushTips(Buffer.from('0000')), [], 'no commands: nothing');
  t.equal(pushTips(Buffer.from('PACK\0\0\0\x02')), null, 'not pkt-lines');
  t.equal(pushTips(Buffer.from('0002')), null, 'a length shorter than its own header');
  // A signed push carries its commands inside its certificate.
  const signed = Buffer.from(
    pkt('push-cert\0 report-status\n') + pkt('certificate version 0.1\n') + pkt(`${ZERO} ${A} refs/heads/main\n`) + pkt('push-cert-end\n') + '0000',
  );
  t.same(pushTips(signed), [A]);
});

t.test('the tips are read off a body streamed in small pieces, each packet once, and written whole', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-push-tips-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const body = Buffer.from(pkt(`${ZERO} ${A} refs/heads/main\0 report-status\n`) + pkt(`${C} ${B} refs/heads/b\n`) + '0000PACK' + 'x'.repeat(1000));
  const stream = new PassThrough();
  const file = path.join(dir, 'one.push.tips');
  const note = notePushTips(stream, file);
  for (let at = 0; at < body.length; at += 3) stream.write(body.subarray(at, at + 3));
  stream.end();
  await note.settled;
  t.equal(fs.readFileSync(file, 'utf8'), `${A}\n${B}\n`);
  t.equal(stream.listenerCount('data'), 0, 'it stops reading at the flush packet');

  const cut = new PassThrough();
  const never = notePushTips(cut, path.join(dir, 'two.push.tips'));
  cut.write(body.subarray(0, 20)); // a body that stops inside its commands
  never.stop();
  await never.settled;
  t.notOk(fs.existsSync(path.join(dir, 'two.push.tips')), 'stopped before the flush packet: nothing written');
});

const EXT = 'ext::sh -c touch% /tmp/pwned';
const gitmodules = `[submodule "x"]\n\tpath = x\n\turl = ${EXT}\n`;

/** A real `wharf serve`, a work tree of 120 objects (so the push is a pack git keeps) whose last commit adds a .gitmodules that runs a command. */
async function badPush(t: Test) {
  const { dir, node, g, work, url } = await servedPush(t, 'early-walk');
  await g.commit(work, 'first', { 'README.md': 'hi\n' });
  await g.ok(['push', '-q', url, 'main'], { cwd: work });
  const before = refList(await g.ok(['ls-remote', url]));
  await addBulk(g, work, 40, 1024);
  await g.commit(work, 'submodule through ext::', { '.gitmodules': gitmodules });
  return { dir, node, g, work, url, before };
}

/** The lines of `trace` that start a `git log --stdin` (the walk) and the pre-receive hook, by index. */
function starts(lines: string[]) {
  const at = (test: (line: string) => boolean) => lines.flatMap((line, i) => (/execve\(/.test(line) && test(line) ? [i] : []));
  return { walks: at((line) => /"log", "--stdin"/.test(line)), hooks: at((line) => /pre-receive"/.test(line)) };
}

const strace = { skip: HAS_STRACE ? false : 'strace is not installed' };

t.test('the walk starts before the pre-receive hook, once, and its refusal still stands', strace, async (t) => {
  const { dir, node, g, work, url, before } = await badPush(t);
  const trace = await traceFileCalls(t, node.child.pid!, dir, 'trace=execve');
  const pushed = await g.run(['push', url, 'main'], { cwd: work });
  const { walks, hooks } = starts(await trace.stop());
  t.not(pushed.code, 0, 'the push fails');
  t.match(pushed.stderr, /submodule "x" url "ext::sh -c touch% \/tmp\/pwned": it uses the "ext::" remote-helper transport/);
  t.same(refList(await g.ok(['ls-remote', url])), before, 'refs unchanged');
  t.equal(hooks.length, 1, 'the hook ran');
  t.equal(walks.length, 1, 'one walk');
  t.ok(walks[0] < hooks[0], 'started before the hook');
  t.same(fs.readdirSync(path.join(dir, 'data', 'push-logs')), [], 'nothing left beside the push logs');
});

t.test('the hook takes the early walk only for the tips it reads itself, and only a walk that succeeded', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-early-walk-hook-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const hooks = await writeHooksDir(path.join(dir, 'data'));
  const g = gitClient(t);
  const repo = path.join(dir, 'app.git');
  await g.ok(['init', '-q', '--bare', '-b', 'main', repo]);
  // A commit with the bad .gitmodules in the repository's objects, no ref naming it: what a push brings.
  const blob = (await g.ok(['hash-object', '-w', '--stdin'], { cwd: repo, input: gitmodules })).trim();
  const tree = (await g.ok(['mktree'], { cwd: repo, input: `100644 blob ${blob}\t.gitmodules\n` })).trim();
  const bad = (await g.ok(['commit-tree', '-m', 'submodule through ext::', tree], { cwd: repo })).trim();
  const pushLog = path.join(dir, 'data', 'push-logs', 'one.push');
  const walk = pushWalkDir(pushLog);
  /** Runs the pre-receive hook for a push of `bad` to main, with an early walk that read `tips`, ended with `status` and printed nothing. */
  const hook = (tips: string, status: string) => {
    fs.rmSync(walk, { recursive: true, force: true });
    fs.mkdirSync(walk, { recursive: true });
    for (const [name, text] of Object.entries({ lock: '', tips: `${tips}\n`, status: `${status}\n`, out: '', synced: '0\n' }))
      fs.writeFileSync(path.join(walk, name), text);
    return spawnSync(path.join(hooks, 'pre-receive'), {
      cwd: repo,
      input: `${ZERO} ${bad} refs/heads/main\n`,
      env: { ...process.env, GIT_DIR: '.', WHARF_PUSH_LOG: pushLog },
      encoding: 'utf8',
    });
  };
  const refused = /submodule "x" url "ext::sh -c touch% \/tmp\/pwned"/;
  const other = hook(A, '0');
  t.equal(other.status, 1, 'a walk of other tips: the hook walks itself and refuses');
  t.match(other.stderr, refused);
  const failed = hook(bad, '128');
  t.equal(failed.status, 1, 'a walk that failed: the hook walks itself and refuses');
  t.match(failed.stderr, refused);
  const same = hook(bad, '0');
  t.equal(same.status, 0, "a walk of the same tips that succeeded is taken as it is (here it found nothing, so the push passes: it is the hook's only walk)");
});

t.test('what pushes of an earlier run left beside their logs is cleared at start; logs stay', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-early-walk-start-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const logs = pushLogDir(dir);
  fs.mkdirSync(path.join(logs, 'one.push.walk'), { recursive: true });
  fs.writeFileSync(path.join(logs, 'one.push.walk', 'out'), '');
  for (const name of ['one.push.tips', 'two.push.tips.tmp', 'three.push']) fs.writeFileSync(path.join(logs, name), '');
  await preparePushLogs(dir);
  t.same(fs.readdirSync(logs), ['three.push']);
});
