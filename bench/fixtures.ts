// Shared by the git and import figures: timing git, and the generated 50 MB,
// 5,000-commit repository both measure.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const COMMITS = 5000;
const BLOB_BYTES = 10 * 1024; // random, so the pack stays ~50 MB

/** Runs git quietly and returns how long it took in ms; throws on failure. */
export function timedGit(args: string[], cwd: string, input?: (stdin: NodeJS.WritableStream) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('git', args, {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-2000)));
    if (input) input(child.stdin);
    else child.stdin.end();
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`git ${args[0]}: ${stderr}`))));
  });
}

/** A fast-import stream of COMMITS commits, each changing one of 50 files to fresh random bytes, with a tag every 500. */
function generate(stdin: NodeJS.WritableStream) {
  let i = 0;
  const write = () => {
    let ok = true;
    while (i < COMMITS && ok) {
      const blob = randomBytes(BLOB_BYTES);
      const message = `commit ${i}\n`;
      const head = `commit refs/heads/main\nmark :${i + 1}\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata ${message.length}\n${message}M 644 inline file-${i % 50}.bin\ndata ${blob.length}\n`;
      const tail = i % 500 === 499 ? `\nreset refs/tags/v${i + 1}\nfrom :${i + 1}\n\n` : '\n';
      ok = stdin.write(Buffer.concat([Buffer.from(head), blob, Buffer.from(tail)]));
      i++;
    }
    if (i < COMMITS) stdin.once('drain', write);
    else stdin.end();
  };
  write();
}

/** Creates the benchmark repository as a packed bare repository at `dir`; returns its pack size in bytes. */
export async function generateRepository(dir: string): Promise<number> {
  await timedGit(['init', '-q', '--bare', dir], path.dirname(dir));
  await timedGit(['fast-import', '--quiet'], dir, generate);
  await timedGit(['repack', '-adq'], dir);
  const packDir = path.join(dir, 'objects', 'pack');
  return fs.readdirSync(packDir).reduce((n, f) => n + fs.statSync(path.join(packDir, f)).size, 0);
}

/** The median of some timings. */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A free loopback port (closed again before use, as git daemon binds it itself). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
