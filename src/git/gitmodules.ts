import { git, gitPiped } from './run.ts';

// git's own fsck refuses a .gitmodules url or path that looks like an option, but accepts
// `ext::sh -c …` and other `<transport>::` remote-helper forms, which run commands when a
// clone follows the submodule (with a permissive protocol.allow). Wharf refuses them on
// push (the pre-receive hook, hooks.ts), on import and on a pull mirror's sync
// (gitmodulesProblem below), like git does for options: every .gitmodules blob that the
// root tree of a new commit names (any case) is read. Only that one can run anything: git
// reads submodules from the top-level .gitmodules alone (a nested one is an ordinary file,
// still checked by git's own fsck), and a folder moved to the top makes new commits whose
// root is checked then. Looking only at the root spares the diff every changed folder:
// about 60 ms of a 700 ms mirror push of 8,000 commits (bench/pushProfile.bench.ts).

/**
 * Why a `submodule.<name>.url` value is refused, or null when it is a plain URL or path.
 * Self-contained on purpose: the pre-receive hook runs this very function's source.
 */
export function submoduleUrlProblem(url: string): string | null {
  if (url.trimStart().startsWith('-')) return 'it starts with "-" and would be read as a command-line option';
  // git's rule for a remote helper: scheme characters followed by "::" (transport.c).
  const helper = /^\s*([A-Za-z0-9+.-]*)::/.exec(url);
  if (helper) return `it uses the "${helper[1]}::" remote-helper transport, which can run commands`;
  return null;
}

/** The words shown for a refused submodule URL (push and import alike). */
export function gitmodulesMessage(blob: string, name: string, url: string, problem: string): string {
  const shown = url.length > 200 ? `${url.slice(0, 200)}…` : url;
  return `gitmodulesUrl: .gitmodules blob ${blob}: submodule "${name}" url "${shown}": ${problem}`;
}

/**
 * How both listings walk, diff and print, after the commits they name: every merge against
 * each parent, raw lines of the root .gitmodules (any case) alone, the user's log settings undone.
 */
const LISTING = [
  ...['--no-follow', '--no-color', '--full-history', '-m', '--root', '--raw', '--no-renames', '--no-abbrev', '--no-show-signature'],
  ...['--format=', '--', ':(icase).gitmodules'],
];

/**
 * The arguments of the one git run that lists, for the new commits of a push, the root
 * tree's entry named .gitmodules (any case, as a case-insensitive checkout would read it)
 * wherever it differs from a parent's: `git log` reads the tips on stdin and walks them
 * itself (`--not --all` leaves out what the repository has), each merge against every
 * parent (`--full-history -m`), raw lines alone. One process where rev-list piped into
 * diff-tree took two: 60 ms instead of 95 ms for 8,000 commits here.
 * git log reads its user's settings: `--no-follow` undoes a `log.follow` (with it, git
 * dies on a pathspec of any case), `--no-color` a `color.ui=always`.
 */
export const GITMODULES_LOG = ['log', '--stdin', '--not', '--all', ...LISTING];

/** Blob ids out of git's raw listing of .gitmodules entries (regular files only; a deletion names none). */
export function gitmodulesBlobs(raw: string): string[] {
  const blobs = new Set<string>();
  for (const m of raw.matchAll(/^:\d+ (100\d{3}) [0-9a-f]+ ([0-9a-f]+) /gm)) blobs.add(m[2]);
  return [...blobs];
}

/** Reads `submodule.*.url` of one blob from `git config -z --blob` output: [name, url] pairs. */
export function submoduleUrls(configZ: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const record of configZ.split('\0')) {
    const nl = record.indexOf('\n');
    if (nl < 0) continue;
    const key = record.slice(0, nl);
    out.push([key.replace(/^submodule\./, '').replace(/\.url$/, ''), record.slice(nl + 1)]);
  }
  return out;
}

/** git config's arguments that print a .gitmodules blob's submodule URLs, NUL-separated. */
export const URL_CONFIG = ['config', '-z', '--get-regexp', '^submodule\\..*\\.url$'];

/** The commits a scan reads: git log's revision arguments, and its stdin when they include `--stdin`. */
export interface ScannedCommits {
  revs: string[];
  input?: string;
}

/**
 * Checks every .gitmodules of the commits `revs` name (all of an import's copy, or a
 * mirror sync's new history); returns the first refusal's message, or null. A blob git
 * cannot parse holds no URL git would use.
 */
export async function gitmodulesProblem(dir: string, commits: ScannedCommits = { revs: ['--all'] }): Promise<string | null> {
  // The push check's walk over these commits: only the commits whose root .gitmodules differs
  // from a parent's are shown, so the output is their entries alone. (Showing every commit
  // too, to count them in the same walk, has git diff each one twice: about 20 ms more for
  // 5,000 commits than a `rev-list --count` beside it.)
  const chunks: Buffer[] = [];
  await gitPiped(['log', ...commits.revs, ...LISTING], commits.input ?? null, (c) => chunks.push(c), { cwd: dir });
  return firstUrlProblem(dir, gitmodulesBlobs(Buffer.concat(chunks).toString('latin1')));
}

/** The first refused submodule URL among some .gitmodules blobs, or null. */
async function firstUrlProblem(dir: string, blobs: string[]): Promise<string | null> {
  for (const blob of blobs) {
    const [config, ...rest] = URL_CONFIG;
    const text = await git([config, '--blob', blob, ...rest], { cwd: dir }).catch(() => '');
    for (const [name, url] of submoduleUrls(text)) {
      const problem = submoduleUrlProblem(url);
      if (problem) return gitmodulesMessage(blob, name, url, problem);
    }
  }
  return null;
}

/**
 * The program the pre-receive hook feeds with "blob <id>" records and `git config -z`
 * output; it prints each refusal and exits 1 when there is one. Built from the functions
 * above, so push and import apply one rule.
 */
export function hookCheckProgram(): string {
  return `// Written by Wharf at start; hand-edits are lost.
const submoduleUrlProblem = ${submoduleUrlProblem.toString()};
const gitmodulesMessage = ${gitmodulesMessage.toString()};
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  let blob = '?';
  let refused = 0;
  for (const record of Buffer.concat(chunks).toString('utf8').split('\\0')) {
    if (record.startsWith('blob ')) { blob = record.slice(5); continue; }
    const nl = record.indexOf('\\n');
    if (nl < 0) continue;
    const name = record.slice(0, nl).replace(/^submodule\\./, '').replace(/\\.url$/, '');
    const url = record.slice(nl + 1);
    const problem = submoduleUrlProblem(url);
    if (problem) { refused++; process.stderr.write("error: refused by Wharf's integrity checks (fsck): " + gitmodulesMessage(blob, name, url, problem) + '\\n'); }
  }
  process.exitCode = refused ? 1 : 0;
});
`;
}
