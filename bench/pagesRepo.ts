// The repository the pages bench browses, shaped like libgit2: 20,000 commits, 7,000 refs
// (6,800 tags, a third of them lightweight, and 199 branches besides main, each with a
// commit of its own) and a source tree a reader would recognise — ~300 files of 1–50 KB in
// 30 folders, a README.md of a few KB, root files — where each commit edits a few lines of
// one to three files (a third of the edits fall on a hot set of 30 files, as real history
// does; most on the smaller files). Built by `git fast-import` in one stream, from a fixed seed and fixed times, so the
// ids are the same every run; then packed (deltas found once here, not in every push).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { packSize, timedGit } from './fixtures.ts';

/** The shape: commits on main, branches besides it (one commit each), tags on main. */
export const PAGES_SHAPE = { main: 19_801, branches: 199, tags: 6_800 };
/** Commits and refs the shape makes (main counts as a ref). */
export const PAGES_COUNTS = { commits: PAGES_SHAPE.main + PAGES_SHAPE.branches, refs: 1 + PAGES_SHAPE.branches + PAGES_SHAPE.tags };

const FOLDERS = [
  'src/libgit2',
  'src/libgit2/streams',
  'src/libgit2/transports',
  'src/util',
  'src/util/hash',
  'src/util/unix',
  'src/util/win32',
  'src/cli',
  'include/git2',
  'include/git2/sys',
  'tests/libgit2/core',
  'tests/libgit2/diff',
  'tests/libgit2/index',
  'tests/libgit2/merge',
  'tests/libgit2/network',
  'tests/libgit2/object',
  'tests/libgit2/refs',
  'tests/libgit2/repo',
  'tests/libgit2/status',
  'tests/util',
  'tests/clar',
  'deps/http-parser',
  'deps/pcre',
  'deps/zlib',
  'deps/ntlmclient',
  'docs',
  'examples',
  'cmake',
  'ci',
  'fuzzers',
];
const FILES_PER_FOLDER = 10;
const STEMS = [
  'odb',
  'refs',
  'index',
  'diff',
  'merge',
  'pack',
  'tree',
  'blob',
  'commit',
  'remote',
  'config',
  'path',
  'buffer',
  'hash',
  'status',
  'attr',
  'ignore',
  'revwalk',
  'signature',
  'stream',
];
const NAMES = ['Edward Thomson', 'Carlos Martín Nieto', 'Vicent Martí', 'Russell Belfer', 'Patrick Steinhardt', 'Ben Straub', 'Philip Kelley', 'Ada Lovelace'];

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

/** What the bench needs to know of the generated tree: a folder with files, and a file of some size in it. */
export interface PagesRepo {
  folder: string;
  file: string;
  fileBytes: number;
  packBytes: number;
}

/** The fast-import stream of the shape, written to `stdin` in pieces as it drains. */
async function stream(stdin: NodeJS.WritableStream): Promise<{ folder: string; file: string }> {
  const rnd = random(20_080_101);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const ident = () => `git_${pick(STEMS)}_${Math.floor(rnd() * 1e6).toString(36)}`;
  const line = () =>
    pick([
      () => `\tif ((error = ${ident()}(&out, repo, ${ident()})) < 0)`,
      () => `\t\tgoto done;`,
      () => `\t${ident()}(&${ident()}, ${Math.floor(rnd() * 4096)});`,
      () => `int ${ident()}(git_repository *repo, const char *path)`,
      () => `/* ${pick(STEMS)}: ${ident()} keeps the ${pick(STEMS)} in step with the ${pick(STEMS)} */`,
      () => `\tGIT_ASSERT_ARG(${ident()});`,
      () => `}`,
      () => ``,
    ])();
  const text = (lines: string[]) => lines.join('\n') + '\n';
  // Sizes spread evenly on a log scale from 1 KB to 50 KB.
  const files = new Map<string, string[]>();
  const body = (bytes: number) => {
    const lines: string[] = [];
    for (let size = 0; size < bytes; size += lines[lines.length - 1].length + 1) lines.push(line());
    return lines;
  };
  for (const folder of FOLDERS)
    for (let f = 0; f < FILES_PER_FOLDER; f++) {
      const ext = folder.startsWith('include') ? 'h' : folder === 'docs' ? 'md' : 'c';
      files.set(`${folder}/${STEMS[f * 2 + (folder.length % 2)]}.${ext}`, body(1024 * Math.exp(rnd() * Math.log(50))));
    }
  const readme = ['# libgit2', '', 'A portable, pure C implementation of the Git core methods.', ''];
  for (let s = 0; s < 12; s++) {
    readme.push(
      `## ${pick(STEMS)} and ${pick(STEMS)}`,
      '',
      `The ${pick(STEMS)} API reads [the ${pick(STEMS)}](docs/${pick(STEMS)}.md) through \`${ident()}\`.`,
      '',
    );
    readme.push(`- ${ident()} keeps the ${pick(STEMS)}`, `- ${ident()} walks the ${pick(STEMS)}`, '', '```c', line(), line(), '```', '');
  }
  files.set('README.md', readme);
  for (const root of ['COPYING', 'CMakeLists.txt', 'SECURITY.md', 'AUTHORS']) files.set(root, Array.from({ length: 40 + Math.floor(rnd() * 300) }, line));
  const paths = [...files.keys()];
  // Most edits land on the smaller of two files picked (big files change less often, and the
  // stream stays small enough for fast-import to take well under a minute).
  const lines = (p: string) => files.get(p)!.length;
  const smaller = (a: string, b: string) => (lines(a) <= lines(b) ? a : b);
  const hot = Array.from({ length: 30 }, () => smaller(pick(paths), pick(paths)));

  let buffer = '';
  let time = 1_200_000_000;
  const flush = async (force = false) => {
    if (!force && buffer.length < 1 << 20) return;
    const chunk = buffer;
    buffer = '';
    if (!stdin.write(chunk)) await new Promise((r) => stdin.once('drain', r));
  };
  const header = (ref: string, mark: number, message: string, from?: number) => {
    const who = pick(NAMES);
    time += 60 + Math.floor(rnd() * 3600);
    const email = `${who.split(' ')[0].toLowerCase()}@example.com`;
    return `commit ${ref}\nmark :${mark}\nauthor ${who} <${email}> ${time} +0000\ncommitter ${who} <${email}> ${time} +0000\ndata ${Buffer.byteLength(message)}\n${message}\n${from ? `from :${from}\n` : ''}`;
  };
  const modify = (p: string) => {
    const t = text(files.get(p)!);
    return `M 644 inline ${p}\ndata ${Buffer.byteLength(t)}\n${t}\n`;
  };
  /** Edits a few lines of one to three files; returns their fast-import commands. */
  const edit = () => {
    let out = '';
    for (let n = rnd() < 0.7 ? 1 : rnd() < 0.7 ? 2 : 3; n > 0; n--) {
      const p = rnd() < 0.35 ? pick(hot) : smaller(pick(paths), pick(paths));
      const body = files.get(p)!;
      const at = Math.floor(rnd() * body.length);
      const grow = body.length * 30 < 50 * 1024 && rnd() < 0.5 ? Math.floor(rnd() * 6) : 0;
      body.splice(at, 1 + Math.floor(rnd() * 4), ...Array.from({ length: 1 + grow }, line));
      out += modify(p);
    }
    return out;
  };
  const message = () => `${pick(STEMS)}: ${pick(['fix', 'teach', 'refactor', 'test', 'document'])} ${ident()}\n\n${line().trim()}\n`;

  buffer += header('refs/heads/main', 1, 'Initial import\n') + paths.map(modify).join('') + '\n';
  for (let k = 2; k <= PAGES_SHAPE.main; k++) {
    buffer += header('refs/heads/main', k, message(), k - 1) + edit() + '\n';
    await flush();
  }
  /** The mark of the main commit at `k` of `n` evenly spaced points. */
  const point = (k: number, n: number) => 1 + Math.floor(((k + 1) * (PAGES_SHAPE.main - 1)) / (n + 1));
  let mark = PAGES_SHAPE.main;
  for (let b = 0; b < PAGES_SHAPE.branches; b++) {
    const name = b < 40 ? `maint/v0.${b}` : `${pick(['feature', 'fix', 'ethomson', 'cmn'])}/${pick(STEMS)}-${b}`;
    buffer += header(`refs/heads/${name}`, ++mark, message(), point(b, PAGES_SHAPE.branches)) + edit() + '\n';
    await flush();
  }
  for (let t = 0; t < PAGES_SHAPE.tags; t++) {
    const name = `v${Math.floor(t / 100)}.${Math.floor(t / 10) % 10}.${t % 10}`;
    if (t % 3 === 2) buffer += `reset refs/tags/${name}\nfrom :${point(t, PAGES_SHAPE.tags)}\n\n`;
    else {
      const note = `libgit2 ${name}\n`;
      buffer += `tag ${name}\nfrom :${point(t, PAGES_SHAPE.tags)}\ntagger ${pick(NAMES)} <release@example.com> ${++time} +0000\ndata ${note.length}\n${note}\n`;
    }
    await flush();
  }
  await flush(true);
  stdin.end();
  const folder = 'src/libgit2';
  // The largest file directly in the folder: some tens of KB of C.
  const file = paths.filter((p) => path.dirname(p) === folder).sort((a, b) => files.get(b)!.length - files.get(a)!.length)[0];
  return { folder, file };
}

/** Creates the shape as a packed bare repository at `dir` (refs packed too); says how long fast-import and the repack took. */
export async function generatePagesRepo(dir: string): Promise<PagesRepo & { fastImportMs: number; repackMs: number }> {
  await timedGit(['init', '-q', '--bare', '--initial-branch=main', dir], path.dirname(dir));
  let picked: Awaited<ReturnType<typeof stream>> | undefined;
  const fastImportMs = await timedGit(['fast-import', '--quiet', '--active-branches=16'], dir, (stdin) => {
    void stream(stdin).then((p) => (picked = p));
  });
  const repackMs = (await timedGit(['repack', '-adq'], dir)) + (await timedGit(['pack-refs', '--all'], dir));
  const fileBytes = Number(execFileSync('git', ['cat-file', '-s', `main:${picked!.file}`], { cwd: dir, encoding: 'utf8' }));
  return { ...picked!, fileBytes, packBytes: packSize(dir), fastImportMs, repackMs };
}
