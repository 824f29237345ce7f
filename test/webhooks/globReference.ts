// A reference matcher for branch-filter globs, written for obviousness, not speed:
// the set of places where each piece of the pattern can end its match, from each place it
// can start (a memoized dynamic program over pieces and characters, braces included). Tests compare src/webhooks/glob.ts with it.

type Tok =
  | { k: 'lit'; c: string }
  | { k: 'one' }
  | { k: 'set'; negate: boolean; pairs: [number, number][] }
  | { k: 'seg' } // * : a run without '/'
  | { k: 'all' } // ** : any run
  | { k: 'allSlash' } // **/ : nothing, or any run ending in '/'
  | { k: 'slashAll' }; // /** ending the pattern: nothing, or '/' and any run
type Item = Tok | { k: 'brace'; alts: Item[][] };

/** The index of the `}` closing the `{` at `i` when it holds a comma at its own depth, else -1; and those commas. */
function brace(cps: string[], i: number, end: number): [number, number[]] {
  const commas: number[] = [];
  let depth = 0;
  for (let j = i; j < end; j++) {
    if (cps[j] === '{') depth += 1;
    if (cps[j] === '}') {
      depth -= 1;
      if (depth === 0) return [commas.length ? j : -1, commas];
    }
    if (cps[j] === ',' && depth === 1) commas.push(j);
  }
  return [-1, commas];
}

function tokenize(cps: string[], start: number, end: number, outer: boolean): Item[] {
  const out: Item[] = [];
  for (let i = start; i < end;) {
    const c = cps[i];
    if (c === '*') {
      let j = i + 1;
      while (j < end && cps[j] === '*') j += 1;
      const whole = j > i + 1 && (i === start || cps[i - 1] === '/') && (j === end || cps[j] === '/');
      const last = out[out.length - 1];
      if (whole && j < end) {
        out.push({ k: 'allSlash' });
        i = j + 1;
        continue;
      }
      if (whole && outer && last && last.k === 'lit' && last.c === '/') out[out.length - 1] = { k: 'slashAll' };
      else out.push({ k: whole ? 'all' : 'seg' });
      i = j;
      continue;
    }
    if (c === '?') {
      out.push({ k: 'one' });
      i += 1;
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      const negate = cps[j] === '!' || cps[j] === '^';
      if (negate) j += 1;
      const from = j;
      while (j < end && !(cps[j] === ']' && j > from)) j += 1;
      if (j < end) {
        const body = cps.slice(from, j);
        const pairs: [number, number][] = [];
        for (let k = 0; k < body.length; k++) {
          if (body[k + 1] === '-' && k + 2 < body.length) {
            pairs.push([body[k].codePointAt(0)!, body[k + 2].codePointAt(0)!]);
            k += 2;
          } else pairs.push([body[k].codePointAt(0)!, body[k].codePointAt(0)!]);
        }
        out.push({ k: 'set', negate, pairs });
        i = j + 1;
        continue;
      }
    }
    if (c === '{') {
      const [close, commas] = brace(cps, i, end);
      if (close >= 0) {
        const cuts = [i, ...commas, close];
        const alts: Item[][] = [];
        for (let k = 1; k < cuts.length; k++) alts.push(tokenize(cps, cuts[k - 1] + 1, cuts[k], false));
        out.push({ k: 'brace', alts });
        i = close + 1;
        continue;
      }
    }
    out.push({ k: 'lit', c });
    i += 1;
  }
  return out;
}

/** Where matching `item` from `i` can end: every index after its match (memoized per item and start). */
function ends(item: Item, i: number, name: string[], memo: Map<Item, Map<number, Set<number>>>): Set<number> {
  let byStart = memo.get(item);
  if (!byStart) memo.set(item, (byStart = new Map()));
  const known = byStart.get(i);
  if (known) return known;
  const n = name.length;
  const out = new Set<number>();
  const c = name[i];
  switch (item.k) {
    case 'lit':
      if (i < n && c === item.c) out.add(i + 1);
      break;
    case 'one':
      if (i < n && c !== '/') out.add(i + 1);
      break;
    case 'set': {
      if (i >= n) break;
      const cp = c.codePointAt(0)!;
      const inside = item.pairs.some(([lo, hi]) => lo <= cp && cp <= hi);
      if (item.negate ? !inside && c !== '/' : inside) out.add(i + 1);
      break;
    }
    case 'seg':
      for (let j = i; ; j++) {
        out.add(j);
        if (j >= n || name[j] === '/') break;
      }
      break;
    case 'all':
      for (let j = i; j <= n; j++) out.add(j);
      break;
    case 'allSlash':
      out.add(i);
      for (let j = i; j < n; j++) if (name[j] === '/') out.add(j + 1);
      break;
    case 'slashAll':
      if (i === n || c === '/') out.add(n);
      break;
    case 'brace':
      for (const alt of item.alts) for (const e of seqEnds(alt, i, name, memo)) out.add(e);
      break;
  }
  byStart.set(i, out);
  return out;
}

/** Where matching a sequence of items from `i` can end. */
function seqEnds(items: Item[], i: number, name: string[], memo: Map<Item, Map<number, Set<number>>>): Set<number> {
  let at = new Set([i]);
  for (const item of items) {
    const next = new Set<number>();
    for (const s of at) for (const e of ends(item, s, name, memo)) next.add(e);
    at = next;
  }
  return at;
}

/** Whether `name` matches `glob` by the reference reading; undefined for a glob it refuses (an extglob). */
export function referenceMatch(glob: string, name: string): boolean | undefined {
  if (/[@!*+?]\(/.test(glob)) return undefined;
  let negate = false;
  while (glob.startsWith('!')) {
    negate = !negate;
    glob = glob.slice(1);
  }
  const cps = [...glob];
  const chars = [...name];
  const hit = seqEnds(tokenize(cps, 0, cps.length, true), 0, chars, new Map()).has(chars.length);
  return hit !== negate;
}
