import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import t from 'tap';
import { buildRepo, startWharf } from '../helpers/wharf.ts';
import { answerBatch, type BatchLinks } from '../../src/transport/lfs/batch.ts';
import { linkObject } from '../../src/lfs/links.ts';
import type { LfsStore } from '../../src/lfs/lfsStore.ts';

const links: BatchLinks = {
  objectHref: (oid) => `http://wharf.test/acme/app.git/info/lfs/objects/${oid}`,
  verifyHref: 'http://wharf.test/acme/app.git/info/lfs/verify',
  header: { Authorization: 'Basic secret' },
};

t.test('a store with its own address gets the transfers, without the caller’s credentials; verify stays with Wharf', async (t) => {
  const w = await startWharf(t);
  const { db, lfs } = w.running.services;
  const repo = await buildRepo(w, 'acme', 'app');
  const content = randomBytes(300);
  const held = createHash('sha256').update(content).digest('hex');
  await lfs.write(held, content.length, Readable.from([content]));
  await linkObject(db, repo.id, held, content.length);
  const absent = 'b'.repeat(64);
  const direct: LfsStore = { ...lfs, href: async (oid, operation) => ({ href: `https://objects.test/${operation}/${oid}`, header: { 'x-signed': '1' } }) };

  const [download] = await answerBatch(db, direct, repo.id, 'download', [{ oid: held, size: content.length }], links);
  t.same(download.actions, { download: { href: `https://objects.test/download/${held}`, header: { 'x-signed': '1' } } });
  const [upload] = await answerBatch(db, direct, repo.id, 'upload', [{ oid: absent, size: 10 }], links);
  t.same(upload.actions, {
    upload: { href: `https://objects.test/upload/${absent}`, header: { 'x-signed': '1' } },
    verify: { href: links.verifyHref, header: links.header },
  });

  const [own] = await answerBatch(db, lfs, repo.id, 'download', [{ oid: held, size: content.length }], links);
  t.same(own.actions, { download: { href: links.objectHref(held), header: links.header } }, 'without href: Wharf’s own route, as before');
});
