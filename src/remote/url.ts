import { literalAddress, resolveAllowed, type HostPolicy } from '../net/hostPolicy.ts';

/** Credentials for a source; handed to git through askpass, never in a URL or argument. */
export interface Credentials {
  username: string;
  password: string;
}

/** A source URL taken apart: what is stored, what git is given, and the credentials it carried. */
export interface SourceUrl {
  /** As sent, with any user info removed: safe to store and show. */
  display: string;
  /** The URL without credentials or fragment. */
  url: URL;
  credentials: Credentials | null;
}

/** Raised for a source URL that may not be imported from; the message is safe to show. createImportJob turns it into a validation failure of `/source_url`. */
export class SourceUrlError extends Error {
  override name = 'SourceUrlError';
}

const PROTOCOLS = new Set(['http:', 'https:', 'git:']);
const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'git:': 9418 };

/**
 * Checks a source URL against SPEC §7.5 (http, https and git only; no local paths,
 * `file:`, `ext::`, ssh, option-like values, control characters) and splits off user info.
 */
export function parseSourceUrl(raw: string): SourceUrl {
  // SECURITY: a value git could read as an option or a transport ("-u…", "ext::…", "/etc").
  if (raw.startsWith('-')) throw new SourceUrlError('must not start with "-"');
  if (/[\s\x00-\x1f\x7f]/.test(raw) || /%0[ad0]/i.test(raw)) throw new SourceUrlError('must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SourceUrlError('must be an http, https or git URL');
  }
  if (!PROTOCOLS.has(url.protocol)) throw new SourceUrlError(`protocol ${url.protocol.replace(/:$/, '')} is not allowed; use http, https or git`);
  if (!url.hostname) throw new SourceUrlError('must name a host');
  let credentials: Credentials | null = null;
  let display = raw;
  if (url.username || url.password) {
    credentials = { username: safeDecode(url.username), password: safeDecode(url.password) };
    url.username = '';
    url.password = '';
    display = url.href;
  }
  url.hash = '';
  return { display: display.replace(/#.*$/, ''), url, credentials };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The port a source URL connects to. */
export function sourcePort(url: URL): number {
  return url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol];
}

/** The host of a URL without IPv6 brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Resolves the source host, checks every address against the policy (HostPolicyError
 * otherwise) and returns how to make git connect to the checked address and no other:
 * for http(s) a curl resolve pin (TLS still checks the name), for git:// the address itself.
 */
export async function pinSource(policy: HostPolicy, url: URL): Promise<{ url: string; config: string[] }> {
  const host = bareHost(url);
  const addresses = await resolveAllowed(policy, host);
  const port = sourcePort(url);
  const bracket = (a: string) => (a.includes(':') ? `[${a}]` : a);
  if (url.protocol === 'git:') {
    // git:// connects to one address: prefer IPv4, which every git daemon listens on.
    const pinned = new URL(url.href);
    pinned.hostname = bracket(addresses.find((a) => !a.includes(':')) ?? addresses[0]);
    return { url: pinned.href, config: [] };
  }
  if (literalAddress(host)) return { url: url.href, config: [] }; // nothing to resolve
  // Every checked address, so curl may fall back between them but never reach another.
  return { url: url.href, config: ['-c', `http.curloptResolve=${host}:${port}:${addresses.map(bracket).join(',')}`] };
}
