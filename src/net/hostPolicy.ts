import dns from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A parsed host policy (SPEC §7.3): which addresses and names outbound connections may reach. */
export interface HostPolicy {
  external: boolean;
  private: boolean;
  loopback: boolean;
  any: boolean;
  cidrs: [Address, number][];
  /** Exact names and `*.suffix` patterns, lowercase. */
  names: string[];
}

/** Raised when a target is refused by the host policy; the message is safe to show. */
export class HostPolicyError extends Error {
  readonly code = 'EHOSTPOLICY';
  constructor(message = 'blocked by host policy') {
    super(message);
  }
}

const NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Parses a policy list such as ["external", "10.0.0.0/8", "*.example.com"]; throws Error naming a bad entry. */
export function parseHostPolicy(entries: string[]): HostPolicy {
  const policy: HostPolicy = { external: false, private: false, loopback: false, any: false, cidrs: [], names: [] };
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (entry === 'external') policy.external = true;
    else if (entry === 'private') policy.private = true;
    else if (entry === 'loopback') policy.loopback = true;
    else if (entry === '*') policy.any = true;
    else if (entry.includes('/')) {
      try {
        const [addr, bits] = ipaddr.parseCIDR(entry);
        policy.cidrs.push([normalize(addr), addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? bits - 96 : bits]);
      } catch {
        throw new Error(`"${raw}" is not a CIDR`);
      }
    } else if (NAME.test(entry)) policy.names.push(entry);
    else throw new Error(`"${raw}" is not external, private, loopback, *, a CIDR or a host name`);
  }
  return policy;
}

function normalize(addr: Address): Address {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

/** Parses an IP literal in any spelling a URL parser accepts ("127.1", "[::ffff:7f00:1]"); null for names. */
export function literalAddress(host: string): Address | null {
  const bare = host.replace(/^\[|\]$/g, '');
  if (!net.isIP(bare)) return null;
  return normalize(ipaddr.parse(bare));
}

function nameAllowed(policy: HostPolicy, hostname: string | undefined): boolean {
  if (!hostname) return false;
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return policy.names.some((n) => (n.startsWith('*.') ? host.endsWith(n.slice(1)) : host === n));
}

/** Whether the policy lets a connection reach `address` (reached through `hostname`, if a name was used). */
export function addressAllowed(policy: HostPolicy, address: string | Address, hostname?: string): boolean {
  const addr = typeof address === 'string' ? literalAddress(address) : normalize(address);
  if (!addr) return false;
  const range = addr.range();
  if (range === 'unspecified') return false; // 0.0.0.0 and :: never
  const inCidr = policy.cidrs.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net as any, bits));
  if (inCidr) return true;
  // Link-local covers cloud metadata (169.254.169.254): only an explicit CIDR opens it.
  if (range === 'linkLocal') return false;
  if (policy.any || nameAllowed(policy, hostname)) return true;
  if (range === 'loopback') return policy.loopback;
  if (range === 'private' || range === 'uniqueLocal' || range === 'carrierGradeNat') return policy.private;
  return policy.external && range === 'unicast';
}

/**
 * Resolves a host (a name or an IP literal) and checks every address it gives;
 * resolves to the allowed addresses, or throws HostPolicyError when none may be reached
 * (any refused address refuses the whole name, so a name cannot mix in an internal address).
 */
export async function resolveAllowed(policy: HostPolicy, host: string): Promise<string[]> {
  const literal = literalAddress(host);
  if (literal) {
    if (!addressAllowed(policy, literal)) throw new HostPolicyError();
    return [literal.toString()];
  }
  let found: { address: string }[];
  try {
    found = await dns.lookup(host, { all: true, verbatim: true });
  } catch {
    throw Object.assign(new Error(`could not resolve ${host}`), { code: 'ENOTFOUND' });
  }
  if (found.length === 0 || found.some((a) => !addressAllowed(policy, a.address, host))) throw new HostPolicyError();
  return found.map((a) => normalize(ipaddr.parse(a.address)).toString());
}
