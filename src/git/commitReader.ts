import { startGit } from './run.ts';

/** A commit as push payloads describe it. */
export interface CommitInfo {
  id: string;
  message: string;
  timestamp: string;
  author: { name: string; email: string };
}

/** "1700000000 +0200" as ISO 8601 with that offset: 2023-11-14T22:13:20+02:00. */
export function gitTimeToIso(seconds: number, offset: string): string {
  const sign = offset[0] === '-' ? -1 : 1;
  const minutes = sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(3, 5)));
  const local = new Date((seconds + minutes * 60) * 1000).toISOString().slice(0, 19);
  return `${local}${offset.slice(0, 3)}:${offset.slice(3, 5)}`;
}

/** Parses a raw commit object (as `git cat-file` prints it). */
export function parseCommit(id: string, raw: Buffer): CommitInfo {
  const text = raw.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2).replace(/\n+$/, '');
  const author = /^author (.*?) ?<([^>]*)> (-?\d+) ([+-]\d{4})$/m.exec(headers);
  return {
    id,
    message,
    timestamp: author ? gitTimeToIso(Number(author[3]), author[4]) : new Date(0).toISOString(),
    author: { name: author?.[1] ?? '', email: author?.[2] ?? '' },
  };
}

/** A `git cat-file --batch` kept open for one job: commits read in as many calls as it takes, one git process. */
export interface CommitReader {
  /** Each revision (a sha, or `<sha>^{commit}` to peel tags) → its commit, or null when it names no commit. Calls queue. */
  read(revisions: string[]): Promise<Map<string, CommitInfo | null>>;
  /** Ends git; calls still queued are rejected. */
  close(): void;
}

/** One object the reader waits for: its revision, or the header already read and the bytes still due. */
interface Awaited {
  revision: string;
  header?: string[];
}

/**
 * Opens one `git cat-file --batch` in `dir` for a series of reads: a push's chunks read
 * their commits through it instead of starting a git each (a spawn costs the event loop
 * milliseconds at Wharf's size). Output is parsed as it streams, so only the object in
 * hand and the current call's answers are held.
 */
export function openCommitReader(dir: string): CommitReader {
  const { child, done } = startGit(['cat-file', '--batch'], { cwd: dir, input: 'open' });
  const stdin = child.stdin!;
  // stdout as it came, joined only once an object's bytes are all in (no copying per chunk).
  let parts: Buffer[] = [];
  let length = 0;
  const lineEnd = () => {
    let offset = 0;
    for (const part of parts) {
      const i = part.indexOf(0x0a);
      if (i >= 0) return offset + i;
      offset += part.length;
    }
    return -1;
  };
  const pull = (n: number): Buffer => {
    const all = parts.length === 1 ? parts[0] : Buffer.concat(parts, length);
    parts = all.length > n ? [all.subarray(n)] : [];
    length -= n;
    return all.subarray(0, n);
  };
  let failure: Error | null = null;
  /** The call being answered: what it still waits for, its answers, and how to settle it. */
  let current: {
    due: Awaited[];
    found: Map<string, CommitInfo | null>;
    resolve: (m: Map<string, CommitInfo | null>) => void;
    reject: (e: Error) => void;
  } | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  const take = () => {
    while (current && current.due.length > 0) {
      const next = current.due[0];
      if (!next.header) {
        const eol = lineEnd();
        if (eol < 0) return;
        next.header = pull(eol + 1)
          .toString('utf8', 0, eol)
          .split(' ');
        if (next.header.length !== 3) {
          current.found.set(next.revision, null); // "<rev> missing" or "ambiguous"
          current.due.shift();
          continue;
        }
      }
      const size = Number(next.header[2]);
      if (length < size + 1) return;
      const body = pull(size + 1).subarray(0, size);
      current.found.set(next.revision, next.header[1] === 'commit' ? parseCommit(next.header[0], body) : null);
      current.due.shift();
    }
    if (current && current.due.length === 0) {
      const { found, resolve } = current;
      current = null;
      resolve(found);
    }
  };
  child.stdout.on('data', (chunk: Buffer) => {
    parts.push(chunk);
    length += chunk.length;
    take();
  });
  void done.then(
    ({ code, stderr }) => {
      failure ??= new Error(`git cat-file ended (exit ${code}): ${stderr.trim()}`);
      current?.reject(failure);
      current = null;
    },
    (err: Error) => {
      failure = err;
      current?.reject(err);
      current = null;
    },
  );

  const readNow = (revisions: string[]) =>
    new Promise<Map<string, CommitInfo | null>>((resolve, reject) => {
      if (failure) return reject(failure);
      current = { due: revisions.map((revision) => ({ revision })), found: new Map(), resolve, reject };
      if (revisions.length === 0) return take();
      stdin.write(revisions.join('\n') + '\n');
    });
  return {
    read(revisions) {
      const answer = queue.then(() => readNow(revisions));
      queue = answer.catch(() => undefined);
      return answer;
    },
    close() {
      failure ??= new Error('the commit reader was closed');
      stdin.end();
      child.kill();
    },
  };
}

/** Reads commits in one `git cat-file --batch` (see CommitReader.read). */
export async function readCommits(dir: string, revisions: string[]): Promise<Map<string, CommitInfo | null>> {
  if (revisions.length === 0) return new Map();
  const reader = openCommitReader(dir);
  try {
    return await reader.read(revisions);
  } finally {
    reader.close();
  }
}
