import { HostPolicyError, addressAllowed, literalAddress, resolveAllowed, type HostPolicy } from '../net/hostPolicy.ts';

/** Longest payload URL accepted (SPEC §5.2). */
export const MAX_URL_LENGTH = 2048;

/**
 * Why a payload URL cannot be accepted, or null when it can: absolute http(s), no user
 * info, at most 2048 characters, and a host the policy allows. A literal IP is judged
 * in whatever spelling it came (the URL parser normalizes `127.1`, `0x7f.1`, `2130706433`);
 * a name is judged on every address it resolves to now, and again at every attempt.
 */
export async function targetProblem(policy: HostPolicy, url: string): Promise<string | null> {
  if (url.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an absolute http or https URL';
  // SECURITY: credentials in a payload URL would be stored and shown; refuse them (SPEC §7.2).
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain user info';
  if (parsed.hostname === '') return 'must name a host';
  const literal = literalAddress(parsed.hostname);
  if (literal) return addressAllowed(policy, literal) ? null : 'is blocked by host policy';
  try {
    await resolveAllowed(policy, parsed.hostname);
    return null;
  } catch (err) {
    return err instanceof HostPolicyError ? 'is blocked by host policy' : 'has a host name that does not resolve';
  }
}
