import t, { type Test } from 'tap';
import { buildRepo, startWharf, type ApiAnswer, type TestWharf } from '../helpers/wharf.ts';

/** Asserts a SPEC §4 error body with a 4xx status. */
function isClientError(t: Test, answer: ApiAnswer, what: string) {
  t.ok(answer.status >= 400 && answer.status < 500, `${what}: 4xx (got ${answer.status})`);
  t.type(answer.body?.error?.code, 'string', `${what}: error code`);
  t.type(answer.body?.error?.message, 'string', `${what}: error message`);
  t.ok(Array.isArray(answer.body?.error?.details), `${what}: details is an array`);
}

/** Row counts of the tables a refused request could have written. */
async function counts(w: TestWharf): Promise<Record<string, number>> {
  const db = w.running.services.db;
  const out: Record<string, number> = {};
  for (const table of ['access_tokens', 'webhooks', 'orgs', 'repositories', 'issues', 'import_jobs']) {
    const [row] = await db(table).count({ n: '*' });
    out[table] = Number(row.n);
  }
  return out;
}

/** A request with a raw path (fetch would not let %-escapes through unchanged otherwise). */
async function raw(w: TestWharf, method: string, path: string, token: string | null = w.adminToken, body?: string): Promise<ApiAnswer> {
  return w.api(method, path, { token, rawBody: body, headers: body === undefined ? {} : { 'content-type': 'application/json' } });
}

t.test('NUL bytes and invalid UTF-8 in paths, queries and JSON strings are a 4xx and change nothing', async (t) => {
  const w = await startWharf(t);
  await buildRepo(w, 'demo', 'app');
  const before = await counts(w);
  const cases: Array<[string, string, string | null, string?]> = [
    ['GET', '/api/v1/repos/demo/app%00/webhooks', w.adminToken],
    ['GET', '/api/v1/repos/demo/app%ff/webhooks', w.adminToken],
    ['GET', '/api/v1/repos/demo/app%ed%a0%80/webhooks', w.adminToken],
    ['GET', '/api/v1/repos/import?org=a%00', w.adminToken],
    ['GET', '/api/v1/repos/demo/app/issues?state=a%ff', w.adminToken],
    ['GET', '/a%00', null],
    ['GET', '/demo/a%00b', null],
    ['GET', '/demo/a%ed%a0%80b', null],
    ['POST', '/api/v1/repos/demo/app/webhooks', w.adminToken, JSON.stringify({ url: 'http://example.com/\u0000', secret: 's', events: ['push'] })],
    ['POST', '/api/v1/repos/demo/app/webhooks', w.adminToken, JSON.stringify({ url: 'http://example.com/h', secret: 'a\u0000b', events: ['push'] })],
    ['POST', '/api/v1/repos/demo/app/webhooks', w.adminToken, '{"url":"http://example.com/h","secret":"a\\ud800b","events":["push"]}'],
    ['POST', '/api/v1/user/tokens', w.adminToken, JSON.stringify({ name: 't\u0000' })],
    ['POST', '/api/v1/user/tokens', w.adminToken, '{"name":"t\\udc00"}'],
    ['POST', '/api/v1/orgs', w.adminToken, JSON.stringify({ name: 'x\u0000' })],
    ['POST', '/api/v1/user/tokens', w.adminToken, JSON.stringify({ name: 't', expires_in: '99999999999999d' })],
    ['POST', '/api/v1/user/tokens', w.adminToken, JSON.stringify({ name: 't', expires_in: '100000d' })],
  ];
  for (const [method, path, token, body] of cases) {
    const answer = await raw(w, method, path, token, body);
    isClientError(t, answer, `${method} ${path} ${body ?? ''}`);
  }
  // Raw invalid UTF-8 bytes in a JSON body are refused, not read as U+FFFD.
  const badBytes = Buffer.concat([Buffer.from('{"name":"t'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
  const answer = await w.api('POST', '/api/v1/user/tokens', { rawBody: badBytes, headers: { 'content-type': 'application/json' } });
  isClientError(t, answer, 'invalid UTF-8 bytes in a JSON body');
  t.same(await counts(w), before, 'no refused request wrote anything');
});

t.test('a huge token lifetime is a 422 naming expires_in; a year is fine', async (t) => {
  const w = await startWharf(t);
  const huge = await w.api('POST', '/api/v1/user/tokens', { body: { name: 't', expires_in: '99999999999999d' } });
  t.equal(huge.status, 422);
  t.equal(huge.body.error.code, 'validation_failed');
  t.same(
    huge.body.error.details.map((d: any) => d.path),
    ['/expires_in'],
  );
  const year = await w.api('POST', '/api/v1/user/tokens', { body: { name: 't', expires_in: '365d' } });
  t.equal(year.status, 201);
});

t.test('the JSON body guard reads the text: without a \\u escape of a NUL or surrogate only nesting is walked, and either still refuses', async (t) => {
  const { refuseBadText } = await import('../../src/http/inputGuard.ts');
  const check = (text: string) => () => refuseBadText(JSON.parse(text), text);
  t.doesNotThrow(check('{"title":"plain","labels":["a","b"]}'));
  t.doesNotThrow(check('{"title":"\\ud83d\\ude00 paired"}'), 'an escaped surrogate pair is text');
  t.doesNotThrow(check('{"title":"\\\\u0000 is an escaped backslash"}'), 'a backslash before u0000 is not a NUL (the full walk finds nothing)');
  t.throws(check('{"title":"a\\u0000b"}'), { code: 'validation_failed' });
  t.throws(check('{"t\\uDC00":1}'), { code: 'validation_failed' }, 'a lone low surrogate in a key, upper-case hex');
  t.throws(check('{"title":"\\ud800"}'), { code: 'validation_failed' });
  t.throws(check('{"a":'.repeat(70) + '1' + '}'.repeat(70)), { code: 'validation_failed' }, 'nesting past 64 levels');
  t.throws(check('['.repeat(70) + ']'.repeat(70)), { code: 'validation_failed' });
});
