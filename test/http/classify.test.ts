import t from 'tap';
import { Readable } from 'node:stream';
import Ajv from 'ajv';
import createError from 'http-errors';
import getRawBody from 'raw-body';
import { classify, STATUS } from '../../src/http/classify.ts';
import { BASE_CODES, FINER_CODES, type ErrorCode } from '../../src/errors/codes.ts';
import * as v from '../../src/errors/wharfError.ts';
import { connect } from '../../src/db/connect.ts';
import { createTestDatabase } from '../helpers/database.ts';

t.test('every code has its status, and every surface sees a SPEC §4 code', async (t) => {
  const expected: Record<string, number> = {
    bad_request: 400,
    unauthorized: 401,
    forbidden: 403,
    not_found: 404,
    request_timeout: 408,
    conflict: 409,
    payload_too_large: 413,
    unsupported_media_type: 415,
    validation_failed: 422,
    rate_limited: 429,
    internal: 500,
  };
  for (const code of BASE_CODES) {
    const c = classify(new v.WharfError(code, `about ${code}`, [{ path: '/x', message: 'bad' }]));
    t.equal(c.status, expected[code], code);
    t.equal(c.code, code);
    t.equal(c.message, `about ${code}`);
    t.same(c.details, [{ path: '/x', message: 'bad' }]);
  }
  t.same(Object.keys(STATUS).sort(), [...BASE_CODES].sort(), 'one status per base code');
  const finer: Record<string, [number, string]> = {
    already_exists: [409, 'conflict'],
    length_required: [411, 'bad_request'],
    method_not_allowed: [405, 'bad_request'],
  };
  for (const code of Object.keys(FINER_CODES) as ErrorCode[]) {
    const c = classify(new v.WharfError(code, 'finer'));
    t.same([c.status, c.code], finer[code], code);
  }
});

t.test('the factories keep their names, messages and headers', async (t) => {
  const cases: [v.WharfError, number, string, string][] = [
    [v.badRequest(), 400, 'bad_request', 'Malformed JSON'],
    [v.unauthorized(), 401, 'unauthorized', 'A valid access token is required'],
    [v.forbidden(), 403, 'forbidden', 'This token may not do that'],
    [v.notFound(), 404, 'not_found', 'Not found'],
    [v.conflict('Name taken'), 409, 'conflict', 'Name taken'],
    [v.alreadyExists('Directory there'), 409, 'conflict', 'Directory there'],
    [v.payloadTooLarge(1024), 413, 'payload_too_large', 'Request body is over the limit of 1024 bytes'],
    [v.unsupportedMediaType(), 415, 'unsupported_media_type', 'Request body must be application/json'],
    [v.validationFailed([{ path: '/a', message: 'is required' }]), 422, 'validation_failed', 'Validation failed'],
    [v.rateLimited(7), 429, 'rate_limited', 'Too many requests'],
    [v.requestTimeout('idle', 30_000), 408, 'request_timeout', 'The request body sent nothing for 30 s'],
  ];
  for (const [err, status, code, message] of cases) t.same([classify(err).status, classify(err).code, classify(err).message], [status, code, message], code);
  t.same(classify(v.rateLimited(7)).headers, { 'Retry-After': '7' });
  t.same(classify(v.unauthorized('x', { 'WWW-Authenticate': 'Basic' })).headers, { 'WWW-Authenticate': 'Basic' });
});

t.test('a real unique violation of the database is a 409 conflict', async (t) => {
  const database = await createTestDatabase();
  const db = connect(database.url);
  t.teardown(async () => {
    await db.destroy();
    await database.drop();
  });
  await db.schema.createTable('classify_unique', (table) => table.string('name').unique());
  await db('classify_unique').insert({ name: 'a' });
  const err = await db('classify_unique')
    .insert({ name: 'a' })
    .then(
      () => null,
      (e) => e,
    );
  t.ok(err, 'the second insert fails');
  t.same(classify(err), { status: 409, code: 'conflict', message: 'Already exists', details: [], headers: {} });
});

t.test("ajv's ValidationError is a 422 naming each failure", async (t) => {
  const ajv = new Ajv.default({ allErrors: true });
  const check = ajv.compile({ $async: true, type: 'object', required: ['name'], properties: { size: { type: 'integer' } } });
  const err = await (check({ size: 'big' }) as Promise<unknown>).then(
    () => null,
    (e) => e,
  );
  t.ok(err instanceof Ajv.ValidationError);
  const c = classify(err);
  t.equal(c.status, 422);
  t.equal(c.code, 'validation_failed');
  t.same(c.details, [
    { path: '/name', message: 'is required' },
    { path: '/size', message: 'must be integer' },
  ]);
});

t.test('the client faults of Koa, raw-body and http-errors keep their 4xx', async (t) => {
  const tooBig = await getRawBody(Readable.from([Buffer.alloc(100)]), { limit: 10 }).then(
    () => null,
    (e) => e,
  );
  t.same([classify(tooBig).status, classify(tooBig).code], [413, 'payload_too_large'], 'raw-body over its limit');
  const badCharset = await getRawBody(Readable.from([Buffer.from('x')]), { encoding: 'no-such-charset' }).then(
    () => null,
    (e) => e,
  );
  t.same([classify(badCharset).status, classify(badCharset).code], [415, 'unsupported_media_type'], 'raw-body with an unknown charset');
  const c = classify(createError(400, 'Invalid JSON'));
  t.same([c.status, c.code, c.message], [400, 'bad_request', 'Invalid JSON'], 'http-errors 400 keeps its message');
});

t.test('anything else is a bare 500 that says nothing of the error', async (t) => {
  const secret = 'postgres://admin:hunter2@db/prod';
  for (const err of [
    new Error(`connect failed: ${secret}`),
    createError(500, secret),
    createError(503, secret, { expose: true }),
    Object.assign(new Error(secret), { status: 404 }),
    secret,
    null,
    undefined,
    { message: secret },
  ]) {
    const c = classify(err);
    t.same(c, { status: 500, code: 'internal', message: 'Internal error', details: [], headers: {} });
    t.notOk(JSON.stringify(c).includes('hunter2'), 'no leak');
  }
});
