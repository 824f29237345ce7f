import picomatch from 'picomatch';
import type { NewEvent } from '../events/types.ts';
import type { Webhook } from './model.ts';

const matchers = new Map<string, (branch: string) => boolean>();

function branchMatcher(glob: string): (branch: string) => boolean {
  let m = matchers.get(glob);
  if (!m) {
    // Compiled globs are cached: fan-out runs inside the producer's transaction.
    if (matchers.size > 1000) matchers.clear();
    m = picomatch(glob, { dot: true });
    matchers.set(glob, m);
  }
  return m;
}

/** Whether a branch filter could ever match a branch: a glob picomatch compiles, without what git refuses in ref names. */
export function validBranchFilter(glob: string): boolean {
  // Space, control characters, ~ ^ : \ and ".." never occur in a branch name (git check-ref-format).
  if (/[\x00-\x20\x7f~^:\\]|\.\./.test(glob)) return false;
  try {
    picomatch.makeRe(glob);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether an event goes to a webhook: it is active, lists the type (or `*`), and for a
 * push with a branch filter, the ref is a branch whose name matches the glob (as in
 * Gitea, a tag push does not pass a branch filter).
 */
export function webhookWants(hook: Webhook, event: Pick<NewEvent, 'type' | 'ref'>): boolean {
  if (!hook.active) return false;
  if (!hook.events.includes('*') && !hook.events.includes(event.type)) return false;
  if (event.type !== 'push' || !hook.branch_filter) return true;
  const ref = event.ref ?? '';
  if (!ref.startsWith('refs/heads/')) return false;
  return branchMatcher(hook.branch_filter)(ref.slice('refs/heads/'.length));
}
