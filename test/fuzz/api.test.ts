import fc from 'fast-check';
import t from 'tap';
import { check, fuzzWharf, junkBody, junkQuery, junkSegment, junkText, snapshot, tally } from './harness.ts';

// Every route of src/api with a body shape close to a valid one; `:x` are path parameters.
const ROUTES: Array<[string, string, Record<string, unknown>?]> = [
  ['GET', '/api/v1/health'],
  ['GET', '/api/v1/meta'],
  ['GET', '/api/v1/user'],
  ['POST', '/api/v1/user/tokens', { name: 't', expires_in: '30d' }],
  ['DELETE', '/api/v1/user/tokens/:id'],
  ['POST', '/api/v1/orgs', { name: 'neworg' }],
  ['POST', '/api/v1/orgs/:org/members', { login: 'outsider', role: 'member' }],
  ['POST', '/api/v1/orgs/:org/repos', { name: 'newrepo', visibility: 'private' }],
  ['GET', '/api/v1/orgs/:org/repos'],
  ['GET', '/api/v1/repos/:org/:repo'],
  ['POST', '/api/v1/repos/import', { source: 'git', url: 'http://127.0.0.1:1/x.git', org: 'demo', name: 'imp' }],
  ['POST', '/api/v1/repos/import', { source_url: 'http://127.0.0.1:1/x.git', target_org: 'demo', name: 'imp', mirror: true, mirror_interval: '8h' }],
  ['GET', '/api/v1/repos/import'],
  ['GET', '/api/v1/repos/import/:id'],
  ['DELETE', '/api/v1/repos/import/:id'],
  ['POST', '/api/v1/repos/:org/:repo/issues/bulk', { issues: [{ number: 1, title: 't' }] }],
  ['POST', '/api/v1/repos/:org/:repo/issues', { title: 't', body: 'b', labels: ['x'] }],
  ['GET', '/api/v1/repos/:org/:repo/issues'],
  ['GET', '/api/v1/repos/:org/:repo/issues/:number'],
  ['PATCH', '/api/v1/repos/:org/:repo/issues/:number', { title: 't', state: 'closed' }],
  ['POST', '/api/v1/repos/:org/:repo/issues/:number/comments', { body: 'c' }],
  ['GET', '/api/v1/repos/:org/:repo/issues/:number/comments'],
  ['PATCH', '/api/v1/repos/:org/:repo/comments/:id', { body: 'c' }],
  ['DELETE', '/api/v1/repos/:org/:repo/comments/:id'],
  ['POST', '/api/v1/repos/:org/:repo/pulls', { title: 'p', head: 'feature', base: 'main' }],
  ['GET', '/api/v1/repos/:org/:repo/pulls'],
  ['GET', '/api/v1/repos/:org/:repo/pulls/:number'],
  ['PATCH', '/api/v1/repos/:org/:repo/pulls/:number', { state: 'closed' }],
  ['PUT', '/api/v1/repos/:org/:repo/pulls/:number/merge', {}],
  ['POST', '/api/v1/repos/:org/:repo/releases', { tag_name: 'v1', name: 'r' }],
  ['GET', '/api/v1/repos/:org/:repo/releases/:id'],
  ['POST', '/api/v1/repos/:org/:repo/pipelines', { name: 'ci', head_sha: 'a'.repeat(40), status: 'queued' }],
  ['GET', '/api/v1/repos/:org/:repo/pipelines/:id'],
  ['PATCH', '/api/v1/repos/:org/:repo/pipelines/:id', { status: 'completed', conclusion: 'success' }],
  ['POST', '/api/v1/repos/:org/:repo/agent-actions', { action: 'a', status: 'started' }],
  [
    'POST',
    '/api/v1/repos/:org/:repo/webhooks',
    { url: 'http://127.0.0.1:9/h', secret: 's', events: ['push'], header_style: 'github', headers: { 'X-Token': 't' } },
  ],
  ['GET', '/api/v1/repos/:org/:repo/webhooks'],
  ['GET', '/api/v1/repos/:org/:repo/webhooks/:id'],
  ['PATCH', '/api/v1/repos/:org/:repo/webhooks/:id', { active: false }],
  ['DELETE', '/api/v1/repos/:org/:repo/webhooks/:id'],
  ['POST', '/api/v1/orgs/:org/webhooks', { url: 'http://127.0.0.1:9/o', secret: 's', events: ['repository', 'import'] }],
  ['GET', '/api/v1/orgs/:org/webhooks'],
  ['GET', '/api/v1/orgs/:org/webhooks/:id'],
  ['PATCH', '/api/v1/orgs/:org/webhooks/:id', { active: false }],
  ['DELETE', '/api/v1/orgs/:org/webhooks/:id'],
  ['DELETE', '/api/v1/repos/:org/:repo'],
  ['POST', '/api/v1/webhooks/:id/ping'],
  ['GET', '/api/v1/webhooks/:id/deliveries'],
  ['GET', '/api/v1/webhooks/:id/deliveries/:delivery'],
  ['POST', '/api/v1/webhooks/:id/deliveries/:delivery/retry'],
  ['POST', '/api/v1/webhooks/:id/deliveries/redeliver', { since: '2026-01-01T00:00:00Z', status: 'failed' }],
  ['POST', '/api/v1/repos/:org/:repo/push-mirrors', { url: 'http://127.0.0.1:1/x.git', username: 'u', password: 'p', interval: '8h' }],
  ['GET', '/api/v1/repos/:org/:repo/push-mirrors'],
  ['GET', '/api/v1/repos/:org/:repo/push-mirrors/:id'],
  ['POST', '/api/v1/repos/:org/:repo/push-mirrors/:id/sync'],
  ['DELETE', '/api/v1/repos/:org/:repo/push-mirrors/:id'],
  ['POST', '/api/v1/repos/:org/:repo/mirror/sync'],
  ['DELETE', '/api/v1/repos/:org/:repo/mirror'],
];

const segment: Record<string, fc.Arbitrary<string>> = {
  org: junkSegment('demo', 'nope'),
  repo: junkSegment('app', 'pub', 'nope'),
  id: junkSegment('1', '2', '2147483647', '2147483648', '0', '-1', '1e3', '00000000-0000-0000-0000-000000000000'),
  number: junkSegment('1', '2', '2147483648', '-1'),
  delivery: junkSegment('1', '00000000-0000-0000-0000-000000000000'),
};

/** One API request: a route with its parameters filled, a caller, a query and a body. */
const apiRequest = (tokens: Record<string, string | null>) =>
  fc.integer({ min: 0, max: ROUTES.length - 1 }).chain((i) => {
    const [method, template, shape] = ROUTES[i];
    const names = [...template.matchAll(/:(\w+)/g)].map((m) => m[1]);
    return fc.record({
      method: fc.constant(method),
      path: fc.tuple(...names.map((n) => segment[n])).map((values) => names.reduce((p, n, k) => p.replace(`:${n}`, values[k]), template)),
      query: junkQuery,
      caller: fc.constantFrom(...Object.keys(tokens)),
      body: shape ? fc.option(junkBody(shape), { nil: undefined, freq: 8 }) : fc.constant(undefined),
      contentType: fc.constantFrom('application/json', 'application/json', 'application/json', 'text/plain', 'application/json; charset=latin1'),
    });
  });

t.test('every API route, fuzzed: never a 5xx, always the SPEC §4 error body, no write when refused', async (t) => {
  const { w, memberToken, outsiderToken } = await fuzzWharf(t);
  const tokens: Record<string, string | null> = {
    admin: w.adminToken,
    member: memberToken,
    outsider: outsiderToken,
    anonymous: null,
    bad: 'wharf_notatoken',
    junk: 'x\u00ff y',
  };
  const seen = tally(t, 'api');
  await check(apiRequest(tokens), async (r) => {
    const before = await snapshot(w);
    const token = tokens[r.caller];
    const headers: Record<string, string> = { 'content-type': r.contentType };
    if (token) headers.authorization = `Bearer ${token}`;
    const answer = await w.api(r.method, r.path + r.query, { token: null, headers, rawBody: r.body });
    seen.count(answer.status);
    const what = `${r.method} ${r.path}${r.query} as ${r.caller}: ${answer.status} ${answer.text.slice(0, 200)}`;
    if (answer.status >= 500) throw new Error(`5xx: ${what}`);
    if (answer.status >= 400) {
      const e = answer.body?.error;
      if (
        typeof e?.code !== 'string' ||
        typeof e?.message !== 'string' ||
        !Array.isArray(e?.details) ||
        answer.body.request_id !== answer.headers.get('x-request-id')
      )
        throw new Error(`not a SPEC §4 error: ${what}`);
      if ((await snapshot(w)) !== before) throw new Error(`a refused request changed the database: ${what}`);
    }
  });
  t.pass('no 5xx, every error in SPEC §4 form, refused requests wrote nothing');
});

t.test('junk headers used as values: request ids, authorization, content types and lengths', async (t) => {
  const { w } = await fuzzWharf(t);
  const seen = tally(t, 'api headers');
  const headerValue = junkText.map((s) => s.replace(/[^\u0020-\u007e\u0080-\u00ff]/g, ''));
  await check(
    fc.record({
      name: fc.constantFrom('x-request-id', 'authorization', 'content-type', 'accept', 'x-forwarded-for', 'if-none-match'),
      value: fc.oneof(
        headerValue,
        headerValue.map((v) => `Bearer ${v}`),
        headerValue.map((v) => `Basic ${Buffer.from(`x:${v}\u0000`).toString('base64')}`),
      ),
      path: fc.constantFrom('/api/v1/user', '/api/v1/orgs/demo/repos', '/api/v1/repos/demo/app/issues'),
    }),
    async (r) => {
      const headers: Record<string, string> = { [r.name]: r.value };
      if (r.name !== 'authorization') headers.authorization = `Bearer ${w.adminToken}`;
      const answer = await w.api('GET', r.path, { token: null, headers });
      seen.count(answer.status);
      if (answer.status >= 500) throw new Error(`5xx: ${r.name}: ${JSON.stringify(r.value)} on ${r.path}: ${answer.text}`);
    },
    100,
  );
  t.pass('no 5xx');
});
