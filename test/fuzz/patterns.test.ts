import fc from 'fast-check';
import t from 'tap';
import { compileGlob } from '../../src/webhooks/glob.ts';
import { referenceMatch } from '../webhooks/globReference.ts';
import { RUNS, SEED } from './harness.ts';

// Branch filters are user input matched against every pushed branch: whatever the
// pattern, a match must give the reference's answer in steps linear in pattern and name.

/** Pieces of patterns: many stars, wildcards, classes, braces, and the characters names are made of. */
const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'b', '/', '-') },
  { weight: 6, arbitrary: fc.constantFrom('*', '**', '?', '*a', '**/') },
  { weight: 2, arbitrary: fc.constantFrom('[ab]', '[!a]', '[a-c]', '[]a]', '[', ']') },
  { weight: 2, arbitrary: fc.constantFrom('{a,b}', '{*,a*}', '{a,{b,**}}', '{', '}', ',', '{,a}') },
  { weight: 1, arbitrary: fc.constantFrom('!', 'é', '.', '(', ')', '|') },
);
const pattern = fc.array(piece, { maxLength: 120, size: 'max' }).map((parts) => [...parts.join('')].slice(0, 255).join(''));
/** Names of few letters, so patterns meet them; sometimes a long run that stars backtrack on. */
const name = fc.oneof(
  fc.array(fc.constantFrom('a', 'b', 'c', '/', 'é'), { maxLength: 255, size: 'max' }).map((cs) => cs.join('')),
  fc.tuple(fc.integer({ min: 0, max: 254 }), fc.constantFrom('b', 'c', '/a')).map(([n, end]) => 'a'.repeat(n) + end),
);

/** A name made from the pattern itself (wildcards filled in), so that many names match or nearly do. */
function likelyName(p: string, fill: string): string {
  return p
    .replace(/^!+/, '')
    .replace(/\{([^{},]*),[^{}]*\}/g, '$1')
    .replace(/\[!?\]?[^\]]*\]/g, 'a')
    .replace(/\*\*/g, `${fill}/${fill}`)
    .replace(/\*/g, fill)
    .replace(/\?/g, 'b')
    .slice(0, 255);
}

t.test('any pattern against any name up to 255 characters: the matcher agrees with the reference within a linear number of steps', async (t) => {
  let maxRatio = 0;
  const answers = { true: 0, false: 0 };
  fc.assert(
    fc.property(pattern, fc.array(name, { minLength: 1, maxLength: 3 }), fc.constantFrom('', 'a', 'ab', 'aaaa'), (p, random, fill) => {
      const names = [...random, likelyName(p, fill)];
      const glob = compileGlob(p);
      if (!glob) return referenceMatch(p, 'a') === undefined; // refused: an extglob, by both
      for (const n of names) {
        const steps = { n: 0 };
        const got = glob.match(n, steps);
        const bound = 16 * ([...p].length + 2) * ([...n].length + 1);
        maxRatio = Math.max(maxRatio, steps.n / bound);
        if (steps.n > bound) return false;
        if (got !== referenceMatch(p, n)) return false;
        answers[`${got}`] += 1;
      }
      return true;
    }),
    { seed: SEED, numRuns: RUNS },
  );
  t.ok(answers.true > 0 && answers.false > 0, `both answers were met (${answers.true} matches, ${answers.false} misses)`);
  t.ok(maxRatio <= 1, `steps stayed within the linear bound (at most ${(maxRatio * 100).toFixed(1)}% of it)`);
});
