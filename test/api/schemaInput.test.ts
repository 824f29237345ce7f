import t from 'tap';
import { buildRepo, startWharf } from '../helpers/wharf.ts';

// Path and query strings are read by the routes' schemas: numbers only as plain decimals
// (ajv's coerceTypes alone would take '1e2', '+1', ' 1' or '0x10'), the last of a
// repeated parameter, defaults filled in, and every bad value named in one 422.
t.test('path ids and query numbers are plain decimals; bad query values are one 422 naming each', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'acme', 'app');
  const base = '/api/v1/repos/acme/app/issues';
  t.equal((await w.api('POST', base, { body: { title: 'one' } })).status, 201);
  t.equal((await w.api('POST', base, { body: { title: 'two' } })).status, 201);

  t.equal((await w.api('GET', `${base}/1`)).status, 200);
  for (const id of ['+1', '01', '1e0', '0x1', '0', '2147483648', 'one']) {
    const res = await w.api('GET', `${base}/${encodeURIComponent(id)}`);
    t.equal(res.status, 404, `issue ${id}`);
    t.equal(res.body.error.message, 'Issue not found', `issue ${id}: the route's own message`);
  }

  const page = await w.api('GET', `${base}?limit=1`);
  t.equal(page.status, 200);
  t.same(
    page.body.map((i: any) => i.number),
    [2],
  );
  t.equal(page.headers.get('link'), `<${base}?state=open&limit=1&cursor=2>; rel="next"`, 'defaults filled in, the next page linked');
  const last = await w.api('GET', `${base}?limit=5&limit=1&cursor=2`);
  t.same(
    last.body.map((i: any) => i.number),
    [1],
    'a repeated parameter counts by its last value',
  );

  for (const limit of ['1e1', '+5', ' 5', '0x5', '0', '101', 'ten']) {
    const res = await w.api('GET', `${base}?limit=${encodeURIComponent(limit)}`);
    t.equal(res.status, 422, `limit=${limit}`);
    t.same(
      res.body.error.details.map((d: any) => d.path),
      ['/limit'],
      `limit=${limit}`,
    );
  }
  const all = await w.api('GET', `${base}?state=shut&limit=0&cursor=-1`);
  t.equal(all.status, 422);
  t.same(all.body.error.details.map((d: any) => d.path).sort(), ['/cursor', '/limit', '/state'], 'every bad value named');
  t.equal((await w.api('GET', `${base}?unknown=1`)).status, 200, 'unknown parameters are ignored');
});
