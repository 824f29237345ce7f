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

t.test('a store with its own download address gets the downloads, without the caller’s credentials; uploads and verify stay with Wharf', async (t) => {
  const w = await startWharf(t);
  const { db, lfs } = w.running.services;
  const repo = await buildRepo(w, 'acme', 'app');
  const other = await buildRepo(w, 'acme', 'other');
  const content = randomBytes(300);
  const held = createHash('sha256').update(content).digest('hex');
  await lfs.write(held, content.length, Readable.from([content]));
  await linkObject(db, repo.id, held, content.length);
  const absent = 'b'.repeat(64);
  const signed: string[] = [];
  const direct: LfsStore = {
    ...lfs,
    downloadHref: async (oid) => {
      signed.push(oid);
      return { href: `https://objects.test/download/${oid}`, header: { 'x-signed': '1' }, expiresIn: 900 };
    },
  };

  const [download] = await answerBatch(db, direct, repo.id, 'download', [{ oid: held, size: content.length }], links);
  t.same(download.actions, { download: { href: `https://objects.test/download/${held}`, header: { 'x-signed': '1' }, expires_in: 900 } });
  const [upload] = await answerBatch(db, direct, repo.id, 'upload', [{ oid: absent, size: 10 }], links);
  t.same(upload.actions, {
    upload: { href: links.objectHref(absent), header: links.header },
    verify: { href: links.verifyHref, header: links.header },
  });
  const [elsewhere] = await answerBatch(db, direct, other.id, 'download', [{ oid: held, size: content.length }], links);
  t.same(elsewhere.error, { code: 404, message: 'Object does not exist' }, 'an object the repository does not hold is not signed');
  t.same(signed, [held], 'the store was asked to sign the linked object only');

  const [own] = await answerBatch(db, lfs, repo.id, 'download', [{ oid: held, size: content.length }], links);
  t.same(own.actions, { download: { href: links.objectHref(held), header: links.header } }, 'without downloadHref: Wharf’s own route, as before');
});
