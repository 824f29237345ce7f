// What the pages bench does to a running server: sign in as a browser does, time GETs of a
// page (one at a time or several side by side), time the git commands a page stands on,
// and read the server's resident memory.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

/** Signs in through the sign-in form with plain HTTP requests, as a browser would; returns the session cookie. */
export async function signInCookie(url: string, token: string): Promise<string> {
  const form = await fetch(`${url}/-/login`);
  const anon = /wharf_anon=([^;]+)/.exec(form.headers.get('set-cookie') ?? '')?.[1];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!anon || !csrf) throw new Error('the sign-in form gave no anonymous cookie or CSRF token');
  const res = await fetch(`${url}/-/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: `wharf_anon=${anon}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token, next: '/' }).toString(),
  });
  const session = /wharf_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  if (!session) throw new Error(`signing in answered ${res.status} without a session cookie`);
  return `wharf_session=${session}`;
}

/** One timed GET: its status and its time in ms to the last byte of the body. */
export async function timedGet(url: string, cookie?: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

/** Runs `count` calls of `one`, `concurrency` at a time; returns each call's result in the order they ended. */
export async function sideBySide<T>(count: number, concurrency: number, one: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) results.push(await one(next++));
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

/** Runs git commands one after another in `dir`, reading their output to the end; returns the time in ms for all of them. */
export async function timedGitCommands(dir: string, commands: string[][]): Promise<number> {
  const started = performance.now();
  for (const args of commands)
    await new Promise<void>((resolve, reject) => {
      const child = spawn('git', args, { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stdout.resume();
      child.stderr.on('data', (c) => (stderr += c));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args.join(' ')}: ${stderr}`))));
    });
  return performance.now() - started;
}

/** A process's resident memory now (VmRSS), in MB. */
export function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return kb / 1024;
}
