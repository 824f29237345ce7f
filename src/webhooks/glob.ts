// Branch-filter globs, matched by simulating a Thompson automaton: every match costs at
// most (states × characters) steps, whatever the pattern, so no filter can freeze a
// node the way a backtracking regular expression can (`*a*a*a…b` against `aaa…c`).
//
// The syntax is the usual one (picomatch's for everything a filter used so far):
//   `*` any run of characters other than `/`; `?` one such character;
//   `**` alone in its segment (between `/`, the pattern's ends, or a brace's `{` `,` `}`):
//     any run of characters, `/` included; `**/` may match nothing (`a/**/b` matches
//     `a/b`, `**/b` matches `b`) and so may a `/**` ending the pattern (`a/**` matches
//     `a`); elsewhere `**` is `*`;
//   `[abc]`, `[a-z]` one character of the set, `[!…]` (or `[^…]`) one character not in
//     it and not `/`; a `[` without its `]` is itself;
//   `{a,b,…}` any of the alternatives (nested, each a glob); braces without a comma
//     inside are themselves;
//   a leading `!` negates the whole filter.
// Extglobs (`@(…)`, `*(…)`, `+(…)`, `?(…)`, `!(…)`) are refused: `!(…)` has no linear
// matcher of this kind, and a filter that silently meant something else would be worse.

type Test = (c: string) => boolean;
/** A state: consumes one character passing `test` and moves to `next`, or moves on without one to each of `eps`. */
type State = { test: Test; next: number } | { eps: number[] };
type Node = { t: 'char'; test: Test } | { t: 'seq'; items: Node[] } | { t: 'alt'; items: Node[] } | { t: 'star'; item: Node } | { t: 'opt'; item: Node };

/** A compiled glob. */
export interface Glob {
  /** Whether the name matches; `steps` (when given) is increased by the work done. */
  match(name: string, steps?: { n: number }): boolean;
}

/** Patterns longer than this are refused: filters are at most 255 characters anyway. */
const MAX_PATTERN = 1024;
const EXTGLOB = /[@!*+?]\(/;

const notSlash: Test = (c) => c !== '/';
const char = (test: Test): Node => ({ t: 'char', test });
const lit = (ch: string): Node => char((c) => c === ch);
const anyRun = (): Node => ({ t: 'star', item: char(() => true) });
const segmentRun = (): Node => ({ t: 'star', item: char(notSlash) });

/** Where the brace opened at `open` closes and where its top-level commas are; undefined when it is not a brace of alternatives. */
function braceAt(cps: string[], open: number, end: number): { close: number; commas: number[] } | undefined {
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < end; i++) {
    if (cps[i] === '{') depth++;
    else if (cps[i] === '}' && --depth === 0) return commas.length > 0 ? { close: i, commas } : undefined;
    else if (cps[i] === ',' && depth === 1) commas.push(i);
  }
  return undefined;
}

/** The class starting at `open` (a `[`): its test and the index after its `]`; undefined when there is no `]`. */
function classAt(cps: string[], open: number, end: number): { test: Test; after: number } | undefined {
  let i = open + 1;
  const negate = cps[i] === '!' || cps[i] === '^';
  if (negate) i++;
  const first = i;
  const ranges: [string, string][] = [];
  for (; i < end; i++) {
    if (cps[i] === ']' && i > first) break;
    if (cps[i + 1] === '-' && i + 2 < end && cps[i + 2] !== ']') {
      ranges.push([cps[i], cps[i + 2]]);
      i += 2;
    } else ranges.push([cps[i], cps[i]]);
  }
  if (i >= end) return undefined;
  const inSet = (c: string) =>
    ranges.some(([lo, hi]) => (lo.codePointAt(0) as number) <= (c.codePointAt(0) as number) && (c.codePointAt(0) as number) <= (hi.codePointAt(0) as number));
  return { test: negate ? (c) => c !== '/' && !inSet(c) : inSet, after: i + 1 };
}

/**
 * Parses cps[start, end) into a sequence; `outer` when it is the whole pattern (not a
 * brace's alternative). A `**` is a whole segment when what is right before and after
 * it is `/`, the pattern's start or end, or a brace's `{`, `,` or `}`.
 */
function parseRange(cps: string[], start: number, end: number, outer: boolean): Node {
  const items: Node[] = [];
  let i = start;
  while (i < end) {
    const c = cps[i];
    if (c === '*') {
      let j = i;
      while (j < end && cps[j] === '*') j++;
      const whole = j - i >= 2 && (i === start || cps[i - 1] === '/') && (j === end || cps[j] === '/');
      if (whole && j < end) {
        // `**/`: any number of whole segments, none included.
        items.push({ t: 'opt', item: { t: 'seq', items: [anyRun(), lit('/')] } });
        i = j + 1;
        continue;
      }
      const prev = items[items.length - 1] as (Node & { slash?: boolean }) | undefined;
      // `/**` ending the pattern: the slash and what follows are optional (`a/**` matches `a`).
      if (whole && outer && prev?.slash) items[items.length - 1] = { t: 'opt', item: { t: 'seq', items: [lit('/'), anyRun()] } };
      else items.push(whole ? anyRun() : segmentRun());
      i = j;
    } else if (c === '?') {
      items.push(char(notSlash));
      i++;
    } else if (c === '[' && classAt(cps, i, end)) {
      const cls = classAt(cps, i, end)!;
      items.push(char(cls.test));
      i = cls.after;
    } else if (c === '{' && braceAt(cps, i, end)) {
      const { close, commas } = braceAt(cps, i, end)!;
      const edges = [i, ...commas, close];
      const alternatives: Node[] = [];
      for (let k = 0; k + 1 < edges.length; k++) alternatives.push(parseRange(cps, edges[k] + 1, edges[k + 1], false));
      items.push({ t: 'alt', items: alternatives });
      i = close + 1;
    } else {
      items.push(c === '/' ? Object.assign(lit(c), { slash: true }) : lit(c));
      i++;
    }
  }
  return { t: 'seq', items };
}

/** Builds the states of `node` so that it continues to state `next`; returns its first state. */
function build(states: State[], node: Node, next: number): number {
  switch (node.t) {
    case 'char':
      return states.push({ test: node.test, next }) - 1;
    case 'seq':
      for (let k = node.items.length - 1; k >= 0; k--) next = build(states, node.items[k], next);
      return next;
    case 'alt': {
      const starts = node.items.map((item) => build(states, item, next));
      return states.push({ eps: starts }) - 1;
    }
    case 'opt': {
      const first = build(states, node.item, next);
      return states.push({ eps: [first, next] }) - 1;
    }
    case 'star': {
      const loop = states.push({ eps: [] }) - 1;
      (states[loop] as { eps: number[] }).eps = [build(states, node.item, loop), next];
      return loop;
    }
  }
}

/** Compiles a glob; undefined when it is not one this matcher takes (an extglob, or over 1,024 characters). */
export function compileGlob(glob: string): Glob | undefined {
  if (glob.length > MAX_PATTERN || EXTGLOB.test(glob)) return undefined;
  let negate = false;
  let body = glob;
  while (body.startsWith('!')) {
    negate = !negate;
    body = body.slice(1);
  }
  const cps = [...body];
  const states: State[] = [{ eps: [] }]; // state 0 accepts
  const start = build(states, parseRange(cps, 0, cps.length, true), 0);
  const seen = new Uint32Array(states.length);
  let generation = 0;

  // Adds a state and every state reachable from it without a character.
  const close = (from: number, into: number[], steps: { n: number }) => {
    const stack = [from];
    while (stack.length > 0) {
      const s = stack.pop()!;
      steps.n++;
      if (seen[s] === generation) continue;
      seen[s] = generation;
      const state = states[s];
      if ('eps' in state) stack.push(...state.eps);
      if ('test' in state || s === 0) into.push(s);
    }
  };

  return {
    match(name, steps = { n: 0 }) {
      generation++;
      let current: number[] = [];
      close(start, current, steps);
      for (const c of name) {
        if (current.length === 0) break;
        generation++;
        const next: number[] = [];
        for (const s of current) {
          steps.n++;
          const state = states[s];
          if ('test' in state && state.test(c)) close(state.next, next, steps);
        }
        current = next;
      }
      return current.includes(0) !== negate;
    },
  };
}
