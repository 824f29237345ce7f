import fc from 'fast-check';
import type { Test } from 'tap';
import { buildRepo, buildUser, startWharf, type TestWharf } from '../helpers/wharf.ts';

/** The seed of every property: FUZZ_SEED when set, so a failure seen once can be replayed. */
export const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
/** Runs per property: a few hundred, sized for CI; FUZZ_RUNS raises it for a longer hunt. */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

/** A Wharf to fuzz, with no background workers (nothing may change the database but the requests). */
export interface FuzzWharf {
  w: TestWharf;
  memberToken: string;
  outsiderToken: string;
}

/** Starts a Wharf with a private and a public repository, an issue, a member and an outsider. */
export async function fuzzWharf(t: Test): Promise<FuzzWharf> {
  const w = await startWharf(t, { workers: [], env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', IMPORT_ALLOWED_HOSTS: 'loopback' } });
  await buildRepo(w, 'demo', 'app', 'private');
  await buildRepo(w, 'demo', 'pub', 'public');
  const { token: memberToken } = await buildUser(w, 'member', { org: 'demo', role: 'member' });
  const { token: outsiderToken } = await buildUser(w, 'outsider');
  const issue = await w.api('POST', '/api/v1/repos/demo/app/issues', { body: { title: 'seed issue' } });
  if (issue.status !== 201) throw new Error(`could not create the seed issue: ${issue.status} ${issue.text}`);
  return { w, memberToken, outsiderToken };
}

// Every table a request could write, whole; last_used_at of tokens moves on any authenticated read.
const TABLES = [
  'users',
  'orgs',
  'memberships',
  'repositories',
  'events',
  'issues',
  'labels',
  'issue_labels',
  'webhooks',
  'deliveries',
  'import_jobs',
  'comments',
  'pull_requests',
  'releases',
  'pipelines',
  'agent_actions',
  'lfs_objects',
  'repository_lfs_objects',
  'push_mirrors',
  'repository_mirrors',
];

/** The content of every table a request could write, as one comparable string. */
export async function snapshot(w: TestWharf): Promise<string> {
  const db = w.running.services.db;
  const parts: unknown[] = [];
  for (const table of TABLES) parts.push(await db(table).select().orderByRaw('1'));
  parts.push(await db('access_tokens').select('id', 'user_id', 'name', 'token_hash', 'expires_at', 'revoked_at').orderBy('id'));
  return JSON.stringify(parts);
}

/** Text a route should refuse: NUL bytes, lone surrogates, controls, long runs, %-escapes, huge and negative numbers. */
export const junkText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfff',
    '\u0001\u001f',
    '../..',
    '%00',
    '%ff',
    '%ed%a0%80',
    '',
    ' ',
    'a'.repeat(300),
    '-1',
    '0',
    '99999999999999999999',
    '1e308',
    'NaN',
    '-9007199254740993',
    '2147483648',
    '9'.repeat(40),
    '99999999999999d',
    '-5m',
    '1.5',
    'true',
    'null',
    '{}',
    '[]',
  ),
);

/** A path segment: a real name sometimes, junk %-escaped (NUL, bad UTF-8) otherwise. */
export const junkSegment = (...real: string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...real) },
    { weight: 2, arbitrary: junkText.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '')) || 'x') },
    { weight: 1, arbitrary: fc.constantFrom('%00', 'a%00b', '%ff', '%ed%a0%80', '%C0%AF', '%', '%zz', '..', '%2e%2e', '%2F') },
  );

/** A query string of junk keys and values, raw (bad escapes included). */
export const junkQuery: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.constantFrom('state', 'limit', 'cursor', 'org', 'status', 'service', 'per_page', 'x'),
      fc.oneof(
        junkText.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))),
        fc.constantFrom('%00', '%ff', '%ed%a0%80', '-1', '101', '0', '99999999999'),
      ),
    ),
    { maxLength: 3 },
  )
  .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : ''));

/** Any JSON value, deep nesting and junk strings included. */
export const junkJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    junkText,
    fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), 1e308)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        junkText,
        fc.constantFrom('title', 'body', 'name', 'url', 'secret', 'events', 'state', 'labels', 'active', 'expires_in', 'objects', 'operation', 'oid', 'size'),
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

/** The text of a body that looks like `shape` with some of its fields swapped for junk, or junk whole. */
export function junkBody(shape: Record<string, unknown>): fc.Arbitrary<string> {
  const keys = Object.keys(shape);
  return fc.oneof(
    junkJson.map((v) => JSON.stringify(v) ?? 'null'),
    fc.record(Object.fromEntries(keys.map((k) => [k, fc.oneof(fc.constant(shape[k]), junkJson)])), { requiredKeys: [] }).map((v) => JSON.stringify(v)),
    // JSON nested far deeper than any schema expects, as an array or under a field.
    fc
      .tuple(fc.integer({ min: 50, max: 5000 }), fc.constantFrom('[', '{"a":'), fc.constantFrom(...keys, 'x'))
      .map(([depth, open, key]) => `{"${key}":${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}}`),
    // Not JSON at all, or JSON cut short.
    fc.constantFrom('', '{', '{"title":', 'null', '[]', '"\\u0000"', '{"title":"\\ud800"}', '\u0000'),
  );
}

/** Tallies cases and 5xx answers and prints them, with the seed, when the test ends. */
export function tally(t: Test, name: string): { count(status: number): void } {
  let cases = 0;
  let serverErrors = 0;
  const byClass: Record<string, number> = {};
  t.teardown(() =>
    console.log(`# fuzz ${name}: ${cases} cases tried, ${serverErrors} 5xx seen, by status class ${JSON.stringify(byClass)} (FUZZ_SEED=${SEED})`),
  );
  return {
    count(status) {
      cases++;
      if (status >= 500) serverErrors++;
      const cls = `${Math.floor(status / 100)}xx`;
      byClass[cls] = (byClass[cls] ?? 0) + 1;
    },
  };
}

/** Runs a property with the suite's seed and size; a failure names the seed, the error and the case (cut short: cases can be megabytes). */
export async function check<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, runs = RUNS): Promise<void> {
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns: runs, endOnFailure: true });
  if (!details.failed) return;
  const shown = (text: string) => (text.length > 1500 ? `${text.slice(0, 1500)}… (${text.length} characters)` : text);
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(`property failed after ${details.numRuns} runs (FUZZ_SEED=${SEED}): ${shown(error)}\ncase: ${shown(JSON.stringify(details.counterexample))}`);
}
