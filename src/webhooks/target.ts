import { HostPolicyError, addressAllowed, addressClass, explainRefusal, literalAddress, resolveAllowed, type HostPolicy } from '../net/hostPolicy.ts';

/** Longest payload URL accepted (SPEC §5.2), as given and as stored. */
export const MAX_URL_LENGTH = 2048;

/**
 * Refused anywhere in a payload URL as given: control characters (C0, DEL, C1), spaces
 * and backslashes. The URL parser would drop tabs and line breaks, trim spaces and read
 * `\` as `/`, so what was typed and where requests go would differ; a clear 422 is better.
 */
const UNSAFE = /[\u0000-\u0020\u007f-\u009f\\]/;

/** The setting a refused payload URL's message names. */
const SETTING = 'WEBHOOK_ALLOWED_HOSTS';

/** A host-policy refusal of a payload URL: the words SPEC §5.3 uses, the setting, and why with how to allow it. */
function blocked(why: string): string {
  return `is blocked by host policy (${SETTING}): ${why}`;
}

/** A payload URL checked: the normalized form to store and send to, or why it cannot be accepted. */
export type TargetCheck = { url: string; problem?: undefined } | { url?: undefined; problem: string };

/**
 * Checks a payload URL: absolute http(s), no user info, no control characters, spaces or
 * backslashes, at most 2048 characters, and a host the policy allows. Answers the URL as
 * the WHATWG parser normalizes it (`HTTP://127.1/a/../b` is `http://127.0.0.1/b`), which
 * is what is stored, shown and sent to. A literal IP is judged in whatever spelling it
 * came; a name is judged on every address it resolves to now, and again at every attempt.
 * A name that does not resolve (yet) is accepted, as on GitHub and Gitea: its attempts
 * fail with `dns error` until it does.
 */
export async function checkTarget(policy: HostPolicy, raw: string): Promise<TargetCheck> {
  if (raw.length > MAX_URL_LENGTH) return { problem: `must be at most ${MAX_URL_LENGTH} characters` };
  if (UNSAFE.test(raw)) return { problem: 'must not contain spaces, control characters or backslashes' };
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { problem: 'must be an absolute http or https URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { problem: 'must be an absolute http or https URL' };
  // SECURITY: credentials in a payload URL would be stored and shown; refuse them (SPEC §7.2).
  if (parsed.username !== '' || parsed.password !== '') return { problem: 'must not contain user info' };
  if (parsed.hostname === '') return { problem: 'must name a host' };
  parsed.hash = ''; // never sent
  const url = parsed.href;
  if (url.length > MAX_URL_LENGTH) return { problem: `must be at most ${MAX_URL_LENGTH} characters once normalized` };
  const literal = literalAddress(parsed.hostname);
  if (literal)
    return addressAllowed(policy, literal)
      ? { url }
      : { problem: blocked(explainRefusal({ host: parsed.hostname, literal: true, addressClass: addressClass(literal) }, SETTING)) };
  try {
    await resolveAllowed(policy, parsed.hostname);
  } catch (err) {
    if (err instanceof HostPolicyError) return { problem: blocked(err.explain(SETTING)) };
    // Not resolvable now: accepted; the connector checks whatever it resolves to at every attempt.
  }
  return { url };
}
