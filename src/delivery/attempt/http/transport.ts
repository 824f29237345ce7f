import type { Config } from '../../../config.ts';
import { openCustomHeaders } from '../../../webhooks/headers.ts';
import type { DeliveryTarget, DeliveryTransport } from '../transport.ts';
import { deliveryAgent } from './agent.ts';
import { httpOutcome } from './outcome.ts';
import { sendAttempt, target } from './send.ts';
import { deliveryHeaders } from './sign.ts';

/**
 * Deliveries as signed HTTP POSTs (SPEC §5.3): the headers signed by sign.ts, sent by
 * send.ts through the one policy-checked keep-alive Agent (agent.ts), the answer read as
 * a neutral outcome by outcome.ts.
 */
export function httpTransport(config: Config): DeliveryTransport {
  const agent = deliveryAgent(config);
  return {
    async send(t: DeliveryTarget, body: Buffer, timeoutMs: number) {
      // Throws when the secret's (or the custom headers') key is not loaded (a rotation while this node ran).
      const signed = deliveryHeaders({
        guid: t.guid,
        event: t.event,
        attempt: t.attempt,
        hookId: t.hookId,
        secret: t.secret,
        body,
        now: Date.now(),
        github: t.github,
      });
      if (t.headers === null) return httpOutcome(await sendAttempt(agent, t.url, signed, body, timeoutMs), signed);
      // Custom headers go after Wharf's own (their names never clash: reserved ones are refused);
      // the attempt records them with masked values.
      const custom = openCustomHeaders(t.headers);
      const result = await sendAttempt(agent, t.url, { ...signed, ...custom.send }, body, timeoutMs);
      return httpOutcome(result, { ...signed, ...custom.recorded });
    },
    // An origin drops the URL's user info, path and query (which may carry tokens).
    describe: (t) => target(t.url).origin,
    close: () => agent.close(),
  };
}
