import t from 'tap';
import { startWharf } from '../helpers/wharf.ts';
import { API_ROUTES } from '../../src/api/index.ts';
import { patternMessage } from '../../src/util/schema.ts';
import { NAME_RULE } from '../../src/domain/names.ts';

/** Every `pattern` in a schema, however deep. */
function patterns(schema: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) patterns(item, found);
  else if (schema && typeof schema === 'object')
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'pattern' && typeof value === 'string') found.add(value);
      else patterns(value, found);
    }
  return found;
}

t.test('every pattern a request body or query is checked against says in words what it asks for', async (t) => {
  const found = new Set<string>();
  for (const route of API_ROUTES) {
    patterns(route.body, found);
    patterns(route.query, found);
  }
  t.ok(found.size > 0);
  for (const pattern of found) t.ok(patternMessage(pattern), `words for ${pattern}`);
});

t.test('a bad name is refused in words, not with the pattern', async (t) => {
  const w = await startWharf(t, { workers: [] });
  t.match(NAME_RULE, /letters, digits, "\.", "_" and "-".*up to 100 characters/);
  const imported = await w.api('POST', '/api/v1/repos/import', {
    body: { source_url: 'https://93.184.215.14/x.git', target_org: 'bad org', name: 'bad name!' },
  });
  t.equal(imported.status, 422);
  t.same(imported.body.error.details, [
    { path: '/target_org', message: NAME_RULE },
    { path: '/name', message: NAME_RULE },
  ]);
  const org = await w.api('POST', '/api/v1/orgs', { body: { name: 'bad name!' } });
  t.equal(org.status, 422);
  t.same(org.body.error.details, [{ path: '/name', message: NAME_RULE }]);
  const dotGit = await w.api('POST', '/api/v1/orgs', { body: { name: 'x.git' } });
  t.same(dotGit.body.error.details, [{ path: '/name', message: NAME_RULE }], 'the rules the pattern cannot say have the same words');
});
