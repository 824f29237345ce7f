import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import Koa from 'koa';
import Router from '@koa/router';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startWharf } from '../helpers/wharf.ts';
import { createApp } from '../../src/app.ts';
import { errorRenderer } from '../../src/http/onerror.ts';
import { requestId } from '../../src/http/requestId.ts';
import { conflict } from '../../src/http/errors.ts';
import { mountRoutes } from '../../src/api/mount.ts';
import { route } from '../../src/api/route.ts';
import { PAYLOAD_SCHEMAS, DELIVERY_HEADERS } from '../../src/domain/payloads/schemas/index.ts';
import type { Services } from '../../src/services.ts';
import { compileDeclaredSchemas } from '../../src/util/schema.ts';
import '../../src/server.ts';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** `METHOD /path/{name}` of every operation in an OpenAPI document. */
function documented(doc: any): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m.toUpperCase()} /api/v1${path}`),
    )
    .sort();
}

/** `METHOD /path/{name}` of every route the API's routers serve, read from their @koa/router stacks. */
function served(services: Services): string[] {
  const app = createApp(services, []);
  const routers = app.middleware.map((m: any) => m.router).filter(Boolean) as Router[];
  return routers
    .flatMap((router) =>
      router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`)),
    )
    .sort();
}

t.test('GET /api/v1/openapi.json: valid OpenAPI 3.1, no token needed, the same as docs/openapi.json, every served route and every webhook event', async (t) => {
  const w = await startWharf(t);
  const res = await w.api('GET', '/api/v1/openapi.json', { token: null });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  const doc = res.body;

  const validator = new Validator();
  const result = await validator.validate(doc);
  t.same(result, { valid: true }, 'the OpenAPI 3.1 validator accepts it');
  t.equal(validator.version, '3.1');
  t.equal(doc.jsonSchemaDialect, 'https://json-schema.org/draft/2020-12/schema');

  const committed = JSON.parse(fs.readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
  t.same(doc, committed, 'docs/openapi.json is what the server serves (run `npm run openapi` after changing a route)');
  t.notMatch(JSON.stringify(doc), w.url, 'the document names no server address');

  t.same(documented(doc), served(w.running.services), 'every route the router serves is documented, and nothing else');

  const ids = new Set<string>();
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      const where = `${method} ${path}`;
      t.ok(op.operationId && !ids.has(op.operationId), `${where}: a unique operationId`);
      ids.add(op.operationId);
      t.ok(op.tags?.length === 1, `${where}: a tag`);
      t.ok(op.responses['500'] && Object.keys(op.responses).some((s) => s < '300'), `${where}: a success and the errors`);
      for (const [status, answer] of Object.entries<any>(op.responses)) {
        // The health check answers 503 with its own body: the one error status that is an answer of its route.
        if (Number(status) >= 400 && !(op.operationId === 'getHealth' && status === '503'))
          t.same(answer.content['application/json'].schema, { $ref: '#/components/schemas/Error' }, `${where} ${status}: the SPEC §4 error`);
      }
      t.same(op.security, op['x-access'] === 'public' ? [] : [{ bearerAuth: [] }], `${where}: security matches its access rule`);
    }
  }
  t.same(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: doc.components.securitySchemes.bearerAuth.description });

  t.same(Object.keys(doc.webhooks).sort(), Object.keys(PAYLOAD_SCHEMAS).sort(), 'one webhook entry per event type');
  t.same(Object.keys(doc.webhooks).sort(), ['agent', 'comment', 'import', 'issue', 'ping', 'pipeline', 'pull_request', 'push', 'release', 'repository']);
  for (const [type, entry] of Object.entries<any>(doc.webhooks)) {
    t.same(entry.post.requestBody.content['application/json'].schema, (PAYLOAD_SCHEMAS as any)[type], `${type}: its payload schema`);
    t.same(
      entry.post.parameters.map((p: any) => [p.name, p.in, p.required]),
      DELIVERY_HEADERS.map((h) => [h.name, 'header', h.always]),
      `${type}: the delivery headers`,
    );
  }

  const meta = await w.api('GET', '/api/v1/meta', { token: null });
  t.equal(res.headers.get('x-ratelimit-limit'), meta.headers.get('x-ratelimit-limit'), 'counted by the rate limit as /meta is');
});

t.test('every schema the server declares compiles in strict mode; one that does not throws when compiled', async (t) => {
  // Schemas compile on first use (src/util/schema.ts): this compiles all the loaded modules declare.
  const compiled = compileDeclaredSchemas();
  t.ok(compiled > 100, `${compiled} schemas compiled`);
  t.equal(compileDeclaredSchemas(), 0, 'each once');
  route({
    method: 'get',
    path: '/broken',
    summary: 'A route whose query schema strict mode refuses',
    tag: 'meta',
    access: 'public',
    query: { type: 'object', properties: { n: { type: 'integer', minimun: 1 } } },
    answers: { 200: null },
    handler: () => null,
  } as never);
  t.throws(() => compileDeclaredSchemas(), /unknown keyword: "minimun"/);
});

t.test('the answer check: a body or status its route does not declare becomes a logged 500; declared answers pass; off by default', async (t) => {
  const w = await startWharf(t);
  const schema = { type: 'object', additionalProperties: false, required: ['n'], properties: { n: { type: 'integer' } } } as const;
  const routes = [
    route({
      id: 'good',
      method: 'get',
      path: '/good',
      summary: '',
      tag: 't',
      access: 'public',
      answers: { 200: schema },
      handler: (_i, ctx) => void (ctx.body = { n: 1 }),
    }),
    route({
      id: 'badBody',
      method: 'get',
      path: '/bad-body',
      summary: '',
      tag: 't',
      access: 'public',
      answers: { 200: schema },
      handler: (_i, ctx) => void (ctx.body = { n: '1' }),
    }),
    route({
      id: 'badStatus',
      method: 'get',
      path: '/bad-status',
      summary: '',
      tag: 't',
      access: 'public',
      answers: { 200: schema },
      handler: (_i, ctx) => void ((ctx.status = 201), (ctx.body = { n: 1 })),
    }),
    route({
      id: 'badError',
      method: 'get',
      path: '/bad-error',
      summary: '',
      tag: 't',
      access: 'public',
      answers: { 200: schema },
      handler: () => {
        throw conflict('undeclared');
      },
    }),
    route({
      id: 'goodError',
      method: 'get',
      path: '/good-error',
      summary: '',
      tag: 't',
      access: 'public',
      answers: { 200: schema },
      errors: [409],
      handler: () => {
        throw conflict('declared');
      },
    }),
  ];
  const serve = async (services: Services) => {
    const app = new Koa();
    app.silent = true;
    app.use(requestId);
    app.use(errorRenderer(services.log));
    const router = new Router();
    mountRoutes(router, services, routes);
    app.use(router.routes());
    const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    t.teardown(() => new Promise((resolve) => server.close(resolve)));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const checked = await serve(w.running.services);
  const statusOf = async (base: string, path: string) => (await fetch(base + path)).status;
  t.equal(await statusOf(checked, '/good'), 200);
  t.equal(await statusOf(checked, '/good-error'), 409);
  for (const path of ['/bad-body', '/bad-status', '/bad-error']) t.equal(await statusOf(checked, path), 500, path);
  const logged = w.logs.filter((line) => line.includes('answer does not match its schema'));
  t.equal(logged.length, 3, 'each mismatch is logged');
  t.match(logged.join(''), /badBody[\s\S]*badStatus[\s\S]*badError/);

  const services = w.running.services;
  const unchecked = await serve({ ...services, config: { ...services.config, validateResponses: false } });
  t.equal(await statusOf(unchecked, '/bad-body'), 200, 'without the check the answer goes out as it is');
  t.equal(await statusOf(unchecked, '/bad-error'), 409);
});
