import { Agent } from 'undici';
import type { Config } from '../../../config.ts';
import { policyConnector } from '../../../net/connector.ts';

/**
 * The one keep-alive Agent deliveries go through. Its connector resolves, checks the
 * host policy on the address actually connected to, and binds DELIVERY_SOURCE_ADDRESS,
 * on every new connection (SPEC §7.3, §7.4).
 */
export function deliveryAgent(config: Config): Agent {
  return new Agent({
    connect: policyConnector(config.webhookAllowedHosts, { localAddress: config.deliverySourceAddress, timeout: config.webhookTimeoutMs }),
    // undici hands the connector the Client's localAddress on every call (the connector's
    // own build option is overridden by it), so the binding must be set here to take effect.
    ...(config.deliverySourceAddress ? { localAddress: config.deliverySourceAddress } : {}),
    // HTTP/1.1 as GitHub delivers (undici 8 would take HTTP/2 when a TLS receiver offers it).
    allowH2: false,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: config.webhookTimeoutMs,
    bodyTimeout: config.webhookTimeoutMs,
  });
}
