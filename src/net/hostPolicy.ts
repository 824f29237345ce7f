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

/** The kind of address a host policy refused, as messages name it. */
export type AddressClass = 'loopback' | 'private' | 'link-local' | 'cloud metadata' | 'unspecified' | 'public' | 'reserved';

/** What was refused: the host as given, whether it was an IP literal (else a name that resolved to such an address), and the address's class. */
export interface Refusal {
  host: string;
  literal: boolean;
  addressClass: AddressClass;
}

/** Raised when a target is refused by the host policy; the message is safe to show. Not a WharfError: callers turn it into a field's validation failure or a delivery's error text. */
export class HostPolicyError extends Error {
  readonly code = 'EHOSTPOLICY';
  constructor(
    readonly refusal?: Refusal,
    message = 'blocked by host policy',
  ) {
    super(message);
  }

  /**
   * Why, and how to allow it, naming the setting (`WEBHOOK_ALLOWED_HOSTS` or
   * `IMPORT_ALLOWED_HOSTS`): "localhost resolves to a loopback address; to allow loopback
   * addresses (local testing) add loopback: WEBHOOK_ALLOWED_HOSTS=external,loopback".
   */
  explain(setting: string): string {
    return explainRefusal(this.refusal, setting);
  }
}

/** The words of HostPolicyError.explain(); also for callers that judged a literal with addressAllowed(). */
export function explainRefusal(refusal: Refusal | undefined, setting: string): string {
  if (!refusal) return `no address of the host is allowed by ${setting}`;
  const subject = refusal.literal ? `${refusal.host} is` : `${refusal.host} resolves to`;
  switch (refusal.addressClass) {
    case 'loopback':
      return `${subject} a loopback address; to allow loopback addresses (local testing) add loopback: ${setting}=external,loopback`;
    case 'private':
      return `${subject} a private address; to allow private networks add private (or the network's CIDR): ${setting}=external,private`;
    case 'link-local':
      return `${subject} a link-local address, allowed only by a CIDR in ${setting} that holds it`;
    case 'cloud metadata':
      return `${subject} a cloud metadata address, allowed only by a CIDR in ${setting} that holds it`;
    case 'unspecified':
      return `${subject} an unspecified address (0.0.0.0 or ::), never allowed`;
    case 'public':
      return `${subject} a public address; to allow public addresses add external: ${setting}=external`;
    default:
      return `${subject} a reserved address (multicast, broadcast, documentation …), allowed only by * or a CIDR in ${setting}`;
  }
}

/** The class of an address as a refusal names it (judged as addressAllowed judges it: an IPv6 form carrying an IPv4 address by that address). */
export function addressClass(address: string | Address): AddressClass {
  const given = typeof address === 'string' ? literalAddress(address) : address;
  if (!given) return 'reserved';
  const addr = judged(given);
  const range = addr.range();
  if (range === 'unspecified') return 'unspecified';
  if (isMetadata(addr)) return 'cloud metadata';
  if (range === 'linkLocal') return 'link-local';
  if (range === 'loopback') return 'loopback';
  if (range === 'private' || range === 'uniqueLocal' || range === 'carrierGradeNat') return 'private';
  return range === 'unicast' ? 'public' : 'reserved';
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
    else if (net.isIP(entry)) {
      // A bare address is that address alone; as a name it could never match a literal.
      const addr = judged(ipaddr.parse(entry));
      policy.cidrs.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else if (entry.includes('/')) {
      try {
        const [addr, bits] = ipaddr.parseCIDR(entry);
        policy.cidrs.push([mappedToIPv4(addr), addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? bits - 96 : bits]);
      } catch {
        throw new Error(`"${raw}" is not a CIDR`);
      }
    } else if (NAME.test(entry)) policy.names.push(entry);
    else throw new Error(`"${raw}" is not external, private, loopback, *, a CIDR or a host name`);
  }
  return policy;
}

/** `::ffff:a.b.c.d` as a.b.c.d: the kernel connects to one exactly as to the other. */
function mappedToIPv4(addr: Address): Address {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

function ipv4(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 address an IPv6 address carries, or null: mapped `::ffff:0:0/96`, translated
 * `::ffff:0:0:0/96`, IPv4-compatible `::/96` (but `::` and `::1`, which are IPv6's own),
 * NAT64 `64:ff9b::/96` and local-use NAT64 `64:ff9b:1::/48` (the last 32 bits), 6to4 `2002::/16` (bits 16–47) and Teredo `2001::/32` (the client,
 * the last 32 bits inverted). Traffic to these reaches, or is translated to, that IPv4 host.
 */
export function embeddedIPv4(addr: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = addr.parts;
  const zero = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && p[5] === 0xffff) return ipv4(p[6], p[7]);
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return ipv4(p[6], p[7]);
  if (zero(0, 6)) return p[6] === 0 && p[7] <= 1 ? null : ipv4(p[6], p[7]);
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return ipv4(p[6], p[7]);
  // RFC 8215's local-use NAT64 prefix: read as the /96 prefixes within it place the address.
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) return ipv4(p[6], p[7]);
  if (p[0] === 0x2002) return ipv4(p[1], p[2]);
  if (p[0] === 0x2001 && p[1] === 0) return ipv4(p[6] ^ 0xffff, p[7] ^ 0xffff);
  return null;
}

/**
 * Cloud metadata services (instance credentials live there). Refused under every policy,
 * names and `*` included; only a listed CIDR or address that holds one opens it. The
 * link-local ones (169.254.0.0/16, fe80::/10) are refused as link-local anyway; listed for the record.
 */
const METADATA: [Address, number][] = [
  // AWS EC2 instance metadata; also GCP, Azure IMDS, Oracle Cloud, OpenStack, DigitalOcean, Hetzner.
  '169.254.169.254/32',
  // AWS ECS task metadata and credentials (v2).
  '169.254.170.2/32',
  // Tencent Cloud metadata (metadata.tencentyun.com).
  '169.254.0.23/32',
  // AWS EC2 instance metadata over IPv6 (Nitro).
  'fd00:ec2::254/128',
  // Google Cloud metadata server over IPv6.
  'fd20:ce::254/128',
  // Alibaba Cloud metadata (in the carrier-grade NAT range `private` opens).
  '100.100.100.200/32',
  // Azure WireServer (platform agent configuration, extension secrets); a public address.
  '168.63.129.16/32',
  // Oracle Cloud Infrastructure Classic metadata.
  '192.0.0.192/32',
].map((cidr) => ipaddr.parseCIDR(cidr));

/** Whether an address (already judged) is a cloud metadata service. */
function isMetadata(addr: Address): boolean {
  return METADATA.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
}

/** The address the policy judges: the embedded IPv4 address of an IPv6 form that carries one, else the address itself. */
function judged(addr: Address): Address {
  return (addr.kind() === 'ipv6' && embeddedIPv4(addr as ipaddr.IPv6)) || addr;
}

/** Parses an IP literal in any spelling a URL parser accepts ("127.1", "[::ffff:7f00:1]"); null for names. */
export function literalAddress(host: string): Address | null {
  const bare = host.replace(/^\[|\]$/g, '');
  if (!net.isIP(bare)) return null;
  return mappedToIPv4(ipaddr.parse(bare));
}

function nameAllowed(policy: HostPolicy, hostname: string | undefined): boolean {
  if (!hostname) return false;
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return policy.names.some((n) => (n.startsWith('*.') ? host.endsWith(n.slice(1)) : host === n));
}

/** Whether the policy lets a connection reach `address` (reached through `hostname`, if a name was used). */
export function addressAllowed(policy: HostPolicy, address: string | Address, hostname?: string): boolean {
  const given = typeof address === 'string' ? literalAddress(address) : address;
  if (!given) return false;
  // SECURITY: `::127.0.0.1`, `64:ff9b::a9fe:a9fe`, `2002:7f00:1::` reach IPv4 hosts; judge those.
  const addr = judged(given);
  const range = addr.range();
  if (range === 'unspecified') return false; // 0.0.0.0 and :: never
  const inCidr = policy.cidrs.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  if (inCidr) return true;
  // SECURITY: link-local (169.254.169.254 among them) and every cloud metadata address open only by a CIDR.
  if (range === 'linkLocal' || isMetadata(addr)) return false;
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
    if (!addressAllowed(policy, literal)) throw new HostPolicyError({ host, literal: true, addressClass: addressClass(literal) });
    return [literal.toString()];
  }
  let found: { address: string }[];
  try {
    found = await dns.lookup(host, { all: true, verbatim: true });
  } catch {
    throw Object.assign(new Error(`could not resolve ${host}`), { code: 'ENOTFOUND' });
  }
  if (found.length === 0) throw new HostPolicyError();
  const refused = found.find((a) => !addressAllowed(policy, a.address, host));
  if (refused) throw new HostPolicyError({ host, literal: false, addressClass: addressClass(refused.address) });
  return found.map((a) => mappedToIPv4(ipaddr.parse(a.address)).toString());
}
