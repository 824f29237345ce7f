import { spawn, type ChildProcess } from 'node:child_process';
import { WHARF_BIN } from './cli.ts';

/** A real `wharf serve` child process, listening. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** The admin token it printed, on the first start of its database. */
  token?: string;
  exited: Promise<unknown>;
}

/**
 * Starts `wharf serve` as a real child process with `env` added to this one's and waits
 * until it prints its address (and, on the first start of the database, its admin
 * token, printed in the same write). Rejects if it exits first or takes over `timeoutMs`.
 */
export async function startServeProcess(env: Record<string, string>, timeoutMs = 120_000): Promise<ServeProcess> {
  const child = spawn(process.execPath, [WHARF_BIN, 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise((resolve) => child.on('close', resolve));
  let out = '';
  const ready = () => /listening on (http:\/\/\S+)/.test(out) && (!/Created user/.test(out) || /Admin token/.test(out));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out waiting for wharf serve to listen')), timeoutMs);
    child.stdout!.on('data', (c) => {
      out += c;
      if (ready()) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error('wharf serve exited before listening'));
    });
  });
  return { child, url: /listening on (http:\/\/\S+)/.exec(out)![1], token: /Admin token.*: (wharf_\S+)/.exec(out)?.[1], exited };
}
