import t from 'tap';
import { buildRepo, startWharf } from '../helpers/wharf.ts';

t.test('every answer carries X-Content-Type-Options: nosniff (API, errors, UI, Git, LFS, metrics)', async (t) => {
  const w = await startWharf(t, { workers: [] });
  await buildRepo(w, 'acme', 'app', 'public');
  const lfsBatch = { operation: 'download', transfers: ['basic'], objects: [{ oid: 'a'.repeat(64), size: 1 }] };
  const answers = {
    'API 200': await w.api('GET', '/api/v1/user'),
    'API 201': await w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: 'x' } }),
    'API 401': await w.api('GET', '/api/v1/user', { token: 'nope' }),
    'API 404': await w.api('GET', '/api/v1/nothing'),
    'API 400': await w.api('POST', '/api/v1/repos/acme/app/issues', { rawBody: '{', headers: { 'content-type': 'application/json' } }),
    'API 422': await w.api('POST', '/api/v1/repos/acme/app/issues', { body: {} }),
    'UI page': await w.api('GET', '/', { token: null }),
    'UI 404': await w.api('GET', '/acme/nope', { token: null }),
    'Git refs': await w.api('GET', '/acme/app.git/info/refs?service=git-upload-pack', { token: null }),
    'Git 404': await w.api('GET', '/acme/app.git/HEAD', { token: null }),
    'LFS batch': await w.api('POST', '/acme/app.git/info/lfs/objects/batch', {
      token: null,
      rawBody: JSON.stringify(lfsBatch),
      headers: { 'content-type': 'application/vnd.git-lfs+json', accept: 'application/vnd.git-lfs+json' },
    }),
    metrics: await w.api('GET', '/metrics', { token: null }),
  };
  for (const [what, answer] of Object.entries(answers)) {
    t.equal(answer.headers.get('x-content-type-options'), 'nosniff', `${what} (${answer.status})`);
  }
  t.equal(answers['Git refs'].status, 200, 'the Git answer is a real one');
});
