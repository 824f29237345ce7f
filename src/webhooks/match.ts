import { compileGlob, type Glob } from './glob.ts';
import type { NewEvent } from '../events/types.ts';
import type { Webhook } from './model.ts';

const matchers = new Map<string, Glob | null>();

function branchMatcher(glob: string): Glob | null {
  let m = matchers.get(glob);
  if (m === undefined) {
    // Compiled globs are cached: fan-out runs inside the producer's transaction.
    if (matchers.size > 1000) matchers.clear();
    m = compileGlob(glob) ?? null;
    matchers.set(glob, m);
  }
  return m;
}

/** Whether a branch filter could ever match a branch: a glob glob.ts compiles (no extglob), without what git refuses in ref names. */
export function validBranchFilter(glob: string): boolean {
  // Space, control characters, ~ ^ : \ and ".." never occur in a branch name (git check-ref-format).
  if (/[\x00-\x20\x7f~^:\\]|\.\./.test(glob)) return false;
  return compileGlob(glob) !== undefined;
}

/**
 * Whether an event goes to a webhook: it is active, or disabled by Wharf itself (a 410,
 * WEBHOOK_DISABLE_AFTER: its deliveries are written held, so its owner's reactivation
 * loses nothing), lists the type (or `*`), and for a push with a branch filter, the ref
 * is a branch whose name matches the glob (as in Gitea, a tag push does not pass a
 * branch filter). Matching is linear in filter and name (glob.ts).
 */
export function webhookWants(hook: Webhook, event: Pick<NewEvent, 'type' | 'ref'>): boolean {
  if (!hook.active && hook.health.state !== 'disabled') return false;
  if (!hook.events.includes('*') && !hook.events.includes(event.type)) return false;
  if (event.type !== 'push' || !hook.branch_filter) return true;
  const ref = event.ref ?? '';
  if (!ref.startsWith('refs/heads/')) return false;
  // A filter stored before extglobs were refused matches nothing (it would have meant something else).
  return branchMatcher(hook.branch_filter)?.match(ref.slice('refs/heads/'.length)) ?? false;
}
