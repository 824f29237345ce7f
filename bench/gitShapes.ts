// The repositories the git bench pushes and clones, built by `git fast-import` in one go:
// a main line, branches with commits of their own, annotated tags and refs/pull/<n>/head
// refs (GitHub's pull request refs, as a mirror of a GitHub project holds them). Every
// commit changes one line of one ~2 KB text file in a tree of folders, so the pack holds
// what source code's does: small deltas, trees rewritten along one path, commits. The
// content comes from a fixed seed and times are fixed, so the ids are the same every run.
import fs from 'node:fs';
import path from 'node:path';
import { packSize, timedGit } from './fixtures.ts';

/** A repository's shape. */
export interface Shape {
  /** Commits on refs/heads/main, one after another. */
  main: number;
  /** Branches refs/heads/topic/<k>, each forking from a point of main. */
  branches: number;
  /** Commits of its own on each branch. */
  branchCommits: number;
  /** Annotated tags refs/tags/v<k> on points of main. */
  tags: number;
  /** refs/pull/<n>/head refs; the first `pullCommits` have a commit of their own, the rest point into main. */
  pulls: number;
  pullCommits: number;
}

/** The git bench's shape b: 8,000 small commits, 40 branches, 300 annotated tags. */
export const SHAPE_B: Shape = { main: 6000, branches: 40, branchCommits: 50, tags: 300, pulls: 0, pullCommits: 0 };

/** Shape c, like libgit2's GitHub mirror: 20,000 small commits, 100 branches, 300 annotated tags, 4,600 refs/pull/<n>/head. */
export const SHAPE_C: Shape = { main: 15_000, branches: 100, branchCommits: 20, tags: 300, pulls: 4600, pullCommits: 3000 };

/** Commits a shape makes. */
export const shapeCommits = (s: Shape) => s.main + s.branches * s.branchCommits + s.pullCommits;

/** Refs a shape makes. */
export const shapeRefs = (s: Shape) => 1 + s.branches + s.tags + s.pulls;

const FOLDERS = 40;
const FILES_PER_FOLDER = 25;
const LINES = 40;

/** A small deterministic generator (mulberry32), so the content is the same every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The fast-import stream of `shape`, written to `stdin` in pieces as it drains. */
async function stream(shape: Shape, stdin: NodeJS.WritableStream): Promise<void> {
  const rnd = random(20_261_124);
  const word = () => Math.floor(rnd() * 0xffffffff).toString(36);
  const files = new Map<string, string[]>();
  const change = () => {
    const file = `src/dir${Math.floor(rnd() * FOLDERS)}/file${Math.floor(rnd() * FILES_PER_FOLDER)}.c`;
    const lines = files.get(file) ?? Array.from({ length: LINES }, (_, i) => `int f${i}(void) { return ${word()} + ${word()}; }`);
    lines[Math.floor(rnd() * LINES)] = `int g${word()}(void) { return ${word()} * ${word()}; }`;
    files.set(file, lines);
    return { file, text: lines.join('\n') + '\n' };
  };
  let mark = 0;
  let time = 1_600_000_000;
  let buffer = '';
  const flush = async (force = false) => {
    if (!force && buffer.length < 1 << 20) return;
    const text = buffer;
    buffer = '';
    if (!stdin.write(text)) await new Promise((r) => stdin.once('drain', r));
  };
  const commit = async (ref: string, message: string, from?: number) => {
    const { file, text } = change();
    mark++;
    time++;
    buffer += `commit ${ref}\nmark :${mark}\nauthor Ada Lovelace <ada@example.com> ${time} +0000\ncommitter Ada Lovelace <ada@example.com> ${time} +0000\n`;
    buffer += `data ${Buffer.byteLength(message)}\n${message}\n${from ? `from :${from}\n` : ''}M 644 inline ${file}\ndata ${Buffer.byteLength(text)}\n${text}\n`;
    await flush();
    return mark;
  };
  // Main commit k (1-based) has mark k.
  for (let k = 1; k <= shape.main; k++) await commit('refs/heads/main', `Change ${k}\n\nTouches one function.\n`, k > 1 ? k - 1 : undefined);
  /** The mark of the main commit at `k` of `n` evenly spaced points. */
  const point = (k: number, n: number) => 1 + Math.floor(((k + 1) * (shape.main - 1)) / (n + 1));
  for (let b = 0; b < shape.branches; b++) {
    for (let c = 0; c < shape.branchCommits; c++)
      await commit(`refs/heads/topic/${b}`, `Topic ${b}: step ${c}\n`, c === 0 ? point(b, shape.branches) : undefined);
  }
  for (let t = 0; t < shape.tags; t++) {
    const message = `Release ${t}\n`;
    buffer += `tag v${t}\nfrom :${point(t, shape.tags)}\ntagger Ada Lovelace <ada@example.com> ${++time} +0000\ndata ${Buffer.byteLength(message)}\n${message}\n`;
  }
  for (let p = 0; p < shape.pulls; p++) {
    if (p < shape.pullCommits) await commit(`refs/pull/${p + 1}/head`, `Pull ${p + 1}\n`, point(p, shape.pullCommits));
    else buffer += `reset refs/pull/${p + 1}/head\nfrom :${point(p, shape.pulls)}\n\n`;
    await flush();
  }
  await flush(true);
  stdin.end();
}

/** Creates a repository of `shape` as a bare, packed repository at `dir` (refs packed too); returns its pack size in bytes. */
export async function generateShape(dir: string, shape: Shape): Promise<number> {
  await timedGit(['init', '-q', '--bare', '--initial-branch=main', dir], path.dirname(dir));
  await timedGit(['fast-import', '--quiet', '--active-branches=64'], dir, (stdin) => void stream(shape, stdin));
  await timedGit(['repack', '-adq'], dir);
  await timedGit(['pack-refs', '--all'], dir);
  return packSize(dir);
}

/** A fresh, empty bare repository as bare `git http-backend` serves it (and file:// pushes go into): pushes taken, every object checked. */
export async function baselineRepository(dir: string): Promise<void> {
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  await timedGit(['init', '-q', '--bare', '--initial-branch=main', dir], path.dirname(dir));
  for (const [key, value] of [
    ['http.receivepack', 'true'],
    ['receive.fsckObjects', 'true'],
  ])
    await timedGit(['config', key, value], dir);
}
