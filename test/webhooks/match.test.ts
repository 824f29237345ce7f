import t from 'tap';
import { webhookWants, validBranchFilter } from '../../src/webhooks/match.ts';
import type { Webhook } from '../../src/webhooks/model.ts';
import { referenceMatch } from './globReference.ts';

// A match that backtracks does not return to the event loop: this file's own timeout (a
// few seconds of work at most) is what fails it, not a timer inside a test.
t.setTimeout(30_000);

const hook = (branch_filter: string): Webhook =>
  ({
    id: 1,
    repository_id: 1,
    url: 'http://127.0.0.1/',
    content_type: 'json',
    events: ['push'],
    active: true,
    branch_filter,
    created_at: 0,
    updated_at: 0,
  }) as unknown as Webhook;
const wants = (filter: string, branch: string) => webhookWants(hook(filter), { type: 'push', ref: `refs/heads/${branch}` });

t.test('the filter of the report against 60 a and a c answers at once, and still matches what it should', async (t) => {
  const filter = '*a*a*a*a*a*a*a*a*a*a*a*a*b';
  t.equal(wants(filter, `${'a'.repeat(60)}c`), false);
  t.equal(wants(filter, `${'a'.repeat(60)}b`), true);
  t.equal(wants(filter, `${'a'.repeat(200)}`), false);
});

t.test('the glob syntax a filter has: *, **, ?, classes, braces, negation', async (t) => {
  const cases: [string, string, boolean][] = [
    ['main', 'main', true],
    ['main', 'mainline', false],
    ['release/*', 'release/1.0', true],
    ['release/*', 'release/1.0/hotfix', false],
    ['release/*', 'release', false],
    ['release/**', 'release/1.0/hotfix', true],
    ['release/**', 'release', true],
    ['**/fix', 'fix', true],
    ['**/fix', 'a/b/fix', true],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['**', 'any/thing/at/all', true],
    ['a**', 'abc', true],
    ['a**', 'ab/c', false],
    ['feat-?', 'feat-1', true],
    ['feat-?', 'feat-12', false],
    ['a?b', 'a/b', false],
    ['v[0-9]', 'v7', true],
    ['v[0-9]', 'vx', false],
    ['v[!0-9]', 'vx', true],
    ['v[!0-9]', 'v7', false],
    ['a[!x]b', 'a/b', false],
    ['[]a]', ']', true],
    ['[a', '[a', true],
    ['{main,develop}', 'develop', true],
    ['{main,develop}', 'feature', false],
    ['x{a,{b,c}}', 'xc', true],
    ['{a,b/c}', 'b/c', true],
    ['{,pre-}main', 'main', true],
    ['{a}', '{a}', true],
    ['{a}', 'a', false],
    ['!main', 'develop', true],
    ['!main', 'main', false],
    ['*.js', 'x.js', true],
    ['a+b', 'a+b', true],
    ['(a|b)', '(a|b)', true],
    ['feature/*', 'feature/ünïcødé', true],
    ['?', 'ü', true],
  ];
  for (const [filter, branch, expected] of cases) {
    t.equal(wants(filter, branch), expected, `${filter} ${expected ? 'matches' : 'does not match'} ${branch}`);
    t.equal(referenceMatch(filter, branch), expected, `the reference agrees on ${filter} / ${branch}`);
  }
  t.equal(webhookWants(hook('main'), { type: 'push', ref: 'refs/tags/main' }), false, 'a tag push does not pass a branch filter');
  t.ok(validBranchFilter('release/{1,2}.x'));
  for (const extglob of ['+(a)', '*(a|b)', '@(main)', '?(x)', '!(main)', 'a/!(b)'])
    t.equal(validBranchFilter(extglob), false, `the extglob ${extglob} is refused`);
  t.equal(wants('+(a)', 'aa'), false, 'a stored extglob (from before) matches nothing');
});

/** Patterns that make backtracking matchers explode, and some that do not. */
function adversarialPatterns(): string[] {
  const out = ['*a*a*a*a*a*a*a*a*a*a*a*a*b', '**a**a**a**a**a**a**a**a**b', '*'.repeat(254) + 'b'];
  out.push('*a'.repeat(127) + 'b', '?*'.repeat(127), '[a]*'.repeat(63) + 'b', '**/'.repeat(84) + 'b', 'a/**/'.repeat(50) + 'b');
  out.push('{a,aa}'.repeat(42) + 'b', '{*a,a*}'.repeat(36) + 'b', '{a,{a,{a,*}}}'.repeat(19) + 'b', '*{a,b}*'.repeat(36) + 'c', '!' + '*a'.repeat(127));
  out.push('[!b]*'.repeat(50) + 'b', '*[a-z]'.repeat(84) + 'b', 'a*/*a*/'.repeat(36));
  return out.map((p) => [...p].slice(0, 255).join(''));
}

function adversarialNames(): string[] {
  return [
    'a'.repeat(254) + 'c',
    'a'.repeat(255),
    'a'.repeat(254) + 'b',
    'a/'.repeat(127) + 'c',
    ('a'.repeat(15) + '/').repeat(15) + 'aaaaaaaaaaaaaaa',
    'ab'.repeat(127) + 'c',
  ];
}

t.test('adversarial patterns against 255-character names: each match agrees with the reference in a number of steps linear in pattern and name', async (t) => {
  const { compileGlob } = await import('../../src/webhooks/glob.ts');
  let checked = 0;
  for (const pattern of adversarialPatterns()) {
    const glob = compileGlob(pattern);
    t.ok(glob, `compiles: ${pattern.slice(0, 40)}…`);
    for (const name of adversarialNames()) {
      const steps = { n: 0 };
      const got = glob!.match(name, steps);
      const bound = 16 * ([...pattern].length + 2) * ([...name].length + 1);
      if (got !== referenceMatch(pattern, name)) t.fail(`${pattern} / ${name}: ${got}, the reference says otherwise`);
      if (steps.n > bound) t.fail(`${pattern} / ${name}: ${steps.n} steps, over ${bound}`);
      checked += 1;
    }
  }
  t.equal(checked, adversarialPatterns().length * adversarialNames().length, 'every pair checked');
});
