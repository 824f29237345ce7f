// Imports, pull mirrors and push mirrors with LFS on the S3 store (LFS_STORE=s3): the
// objects they bring land in the bucket, and a push mirror sends objects read from it.
// Both Wharfs keep their objects in buckets of one Swift (started once for the file), so
// the import also downloads from presigned bucket addresses another Wharf hands out.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { startSwift, type TestSwift } from '../helpers/swift.ts';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';
import { gitClient, refList, repoUrl, type GitClient } from '../helpers/git.ts';
import { waitFor } from '../helpers/wait.ts';
import { createOrg } from '../../src/domain/accounts.ts';
import { createRepository } from '../../src/domain/repos.ts';
import { objectKey } from '../../src/lfs/s3Store.ts';
import { buildSource, lfsFile, uploadLfs, waitForJob, type LfsFile, type Source } from '../import/helpers.ts';
import { mirrorSettled } from '../pushMirrors/helpers.ts';

const swift = await startSwift(t);
if (swift) await flows(swift);

/** Asserts that every file is in the bucket under its key, with its bytes. */
async function inBucket(t: Test, s: TestSwift, bucket: string, files: LfsFile[], where: string) {
  for (const f of files) {
    const Key = objectKey(f.oid);
    const head = await s.client.send(new HeadObjectCommand({ Bucket: bucket, Key }));
    t.equal(head.ContentLength, f.size, `${where}: ${f.oid.slice(0, 8)} is in the bucket at its size`);
    const got = await s.client.send(new GetObjectCommand({ Bucket: bucket, Key }));
    t.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(f.content), `${where}: ${f.oid.slice(0, 8)}'s bytes match`);
  }
}

/** No object was kept on the node's own disk: the file system store's directory holds no file. */
function nothingOnDisk(w: TestWharf): boolean {
  const dir = w.config.lfsDir;
  return !fs.existsSync(dir) || fs.readdirSync(dir, { recursive: true }).every((f) => fs.statSync(path.join(dir, String(f))).isDirectory());
}

async function mirrorState(w: TestWharf, fullName: string, token: string): Promise<any> {
  return (await w.api('GET', `/api/v1/repos/${fullName}`, { token })).body.mirror;
}

async function flows(s: TestSwift) {
  const upBucket = await s.bucket();
  const bucket = await s.bucket();
  const up = await startWharf(t, { env: s.env(upBucket) });
  const w = await startWharf(t, { env: { ...s.env(bucket), IMPORT_ALLOWED_HOSTS: 'loopback' } });
  const g: GitClient = gitClient(t);
  await g.ok(['lfs', 'install', '--skip-repo']);
  const base = path.join(g.dir, 'built');
  fs.mkdirSync(base);
  let source: Source;
  const upOrg = await createOrg(up.running.services.db, 'up');
  const { token: upToken } = await buildUser(up, 'sam', { org: 'up', role: 'owner' });
  const { token } = await buildUser(w, 'olive', { org: 'demo', role: 'owner' });

  await t.test('an import lands every LFS object in the bucket, and a clone through Wharf gets them', async (t) => {
    source = await buildSource(g, base);
    await createRepository(up.running.services, { org: upOrg, name: 'proj', default_branch: 'trunk' });
    await g.ok(['push', '-q', '--mirror', repoUrl(up, 'up/proj', upToken)], { cwd: source.bare });
    await uploadLfs(up, 'up/proj', upToken, [source.lfs.kept, source.lfs.old]);

    const created = await w.api('POST', '/api/v1/repos/import', {
      token,
      body: { source_url: `${up.url}/up/proj.git`, target_org: 'demo', name: 'proj', mirror: true, auth_username: 'sam', auth_password: upToken },
    });
    t.equal(created.status, 202, created.text);
    const job = await waitForJob(w, created.body.id, { token });
    t.equal(job.status, 'succeeded', job.error);
    t.equal(job.repository.lfs_objects, 2, 'the object on trunk and the one only in history');
    t.same(
      job.repository.missing_lfs_objects.map((m: any) => m.oid),
      [source.lfs.absent.oid],
    );
    await inBucket(t, s, bucket, [source.lfs.kept, source.lfs.old], 'import');
    t.ok(nothingOnDisk(w), 'nothing written to LFS_DIR');

    // A git lfs clone through Wharf gets the real bytes (absent.bin was never at the source: left a pointer).
    const clone = path.join(g.dir, 'clone');
    await g.ok(['clone', '-q', repoUrl(w, 'demo/proj', token), clone], { env: { GIT_LFS_SKIP_SMUDGE: '1' } });
    await g.ok(['lfs', 'pull', '--include', 'kept.bin'], { cwd: clone });
    t.ok(fs.readFileSync(path.join(clone, 'kept.bin')).equals(source.lfs.kept.content), 'the clone has the object on trunk');
    await g.ok(['lfs', 'fetch', 'origin', 'v0.1'], { cwd: clone });
    const old = source.lfs.old.oid;
    t.ok(
      fs.readFileSync(path.join(clone, '.git', 'lfs', 'objects', old.slice(0, 2), old.slice(2, 4), old)).equals(source.lfs.old.content),
      'and the one only in history',
    );
  });

  const fresh = lfsFile(5000);
  await t.test('a pull mirror sync that brings a new LFS object writes it to the bucket', async (t) => {
    const work = path.join(g.dir, 'up-work');
    await g.ok(['clone', '-q', repoUrl(up, 'up/proj', upToken), work], { env: { GIT_LFS_SKIP_SMUDGE: '1' } });
    await g.commit(work, 'a new LFS object', { 'fresh.bin': fresh.pointer });
    await uploadLfs(up, 'up/proj', upToken, [fresh]);
    await g.ok(['push', '-q', 'origin', 'trunk'], { cwd: work });

    const before = Date.now();
    t.equal((await w.api('POST', '/api/v1/repos/demo/proj/mirror/sync', { token })).status, 202);
    const state = await waitFor(
      async () => {
        const m = await mirrorState(w, 'demo/proj', token);
        return m?.last_sync_at && Date.parse(m.last_sync_at) > before && m;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'the mirror sync' },
    );
    t.equal(state.last_sync_status, 'succeeded', state.last_error ?? '');
    t.same(refList(await g.ok(['ls-remote', repoUrl(w, 'demo/proj', token)])), refList(await g.ok(['ls-remote', repoUrl(up, 'up/proj', upToken)])));
    await inBucket(t, s, bucket, [fresh], 'sync');
    t.ok(nothingOnDisk(w), 'nothing written to LFS_DIR');
  });

  await t.test('a push mirror pushes LFS objects read from the bucket to its target', async (t) => {
    await buildRepo(up, 'dst', 'copy');
    const { token: bobToken } = await buildUser(up, 'bob', { org: 'dst', role: 'owner' });
    const before = Date.now();
    const created = await w.api('POST', '/api/v1/repos/demo/proj/push-mirrors', {
      token,
      body: { url: `${up.url}/dst/copy.git`, username: 'bob', password: bobToken },
    });
    t.equal(created.status, 201, created.text);
    const row = await mirrorSettled(w, created.body.id, before);
    t.equal(row.last_sync_status, 'succeeded', row.last_error ?? '');
    const sent = [source.lfs.kept, source.lfs.old, fresh];
    // The target keeps them in its own bucket: what arrived there is what the push mirror read from ours.
    await inBucket(t, s, upBucket, sent, 'push mirror target');
    t.same(
      (
        await up.running.services
          .db('repository_lfs_objects')
          .join('repositories', 'repositories.id', 'repository_lfs_objects.repository_id')
          .where('repositories.name', 'copy')
          .pluck('oid')
      ).sort(),
      sent.map((f) => f.oid).sort(),
      'linked to the target repository',
    );
    const clone = path.join(g.dir, 'target-clone');
    // A push mirror sends branches and tags, not HEAD: the target's default branch is its own (main).
    await g.ok(['clone', '-q', '-b', 'trunk', repoUrl(up, 'dst/copy', bobToken), clone], { env: { GIT_LFS_SKIP_SMUDGE: '1' } });
    await g.ok(['lfs', 'pull', '--include', 'fresh.bin'], { cwd: clone });
    t.ok(fs.readFileSync(path.join(clone, 'fresh.bin')).equals(fresh.content), 'a clone of the target gets the bytes');
    t.ok(nothingOnDisk(w), 'nothing written to LFS_DIR');
  });
}
