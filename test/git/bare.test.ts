import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { configureRepository, initBareRepository } from '../../src/git/bare.ts';

const git = (dir: string, ...args: string[]) => execFileSync('git', args, { cwd: dir }).toString().trim();
const settings = (dir: string) =>
  git(dir, 'config', '--local', '--list')
    .split('\n')
    .filter((l) => /^(receive|http|uploadpack|core\.logallrefupdates)/.test(l))
    .sort();
const WANTED = [
  'core.logallrefupdates=false',
  'http.receivepack=true',
  'receive.fsckobjects=true',
  'uploadpack.allowanysha1inwant=false',
  'uploadpack.allowfilter=true',
];

t.test('a new bare repository is one git reads as bare, with HEAD on its default branch and Wharf settings', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bare-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  for (const branch of ['main', 'team/dev', 'release-1.0']) {
    const dir = path.join(root, `${branch.replace(/\W/g, '-')}.git`);
    await initBareRepository(dir, branch);
    t.equal(git(dir, 'rev-parse', '--is-bare-repository'), 'true', `${branch}: bare`);
    t.equal(git(dir, 'symbolic-ref', 'HEAD'), `refs/heads/${branch}`, `${branch}: HEAD`);
    t.same(settings(dir), WANTED, `${branch}: settings`);
    t.equal(git(dir, 'fsck', '--no-dangling'), '', `${branch}: fsck clean`);
  }
  await t.rejects(initBareRepository(path.join(root, 'main.git'), 'main'), { code: 'EEXIST' }, 'an existing directory is never adopted');
});

t.test("configuring an imported repository sets every setting once, overriding the source's own values", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bare-')) + '/imported.git';
  t.teardown(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));
  execFileSync('git', ['init', '-q', '--bare', dir]);
  git(dir, 'config', 'receive.fsckObjects', 'false');
  git(dir, 'config', 'uploadpack.allowFilter', 'true');
  await configureRepository(dir);
  t.same(settings(dir), WANTED);
  await configureRepository(dir);
  t.same(settings(dir), WANTED, 'twice changes nothing');
});
