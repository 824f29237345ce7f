import { buildConnector } from 'undici';
import { literalAddress, resolveAllowed, type HostPolicy } from './hostPolicy.ts';

/**
 * An undici connector that resolves the host itself, checks every address against
 * the host policy, and connects to the checked address (TLS still verifies the
 * original name). Checking the address actually connected to, at every attempt,
 * is what stops DNS rebinding and names that point inside.
 */
export function policyConnector(policy: HostPolicy, options: { localAddress?: string; timeout?: number } = {}): buildConnector.connector {
  const base = buildConnector({ timeout: options.timeout, localAddress: options.localAddress } as buildConnector.BuildOptions);
  return (opts, callback) => {
    // SECURITY: the policy decides on the resolved address, never on the name alone.
    resolveAllowed(policy, opts.hostname).then(
      ([address]) => {
        // undici passes the Client's localAddress (null when unset) on every call; keep ours then.
        const localAddress = opts.localAddress ?? options.localAddress;
        const servername = opts.servername ?? (literalAddress(opts.hostname) ? undefined : opts.hostname);
        base({ ...opts, localAddress, hostname: address, servername } as typeof opts, callback);
      },
      (err) => callback(err, null),
    );
  };
}
