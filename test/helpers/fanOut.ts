import { useFanOut } from '../../src/events/fanOut.ts';
import { webhookFanOut } from '../../src/webhooks/fanout.ts';

/**
 * Registers the webhook fan-out with the outbox, as startServer and the CLI do, for a test
 * or bench that records events in a process where no server was started (its servers run
 * as child processes). Registering it again does nothing.
 */
export function useWebhookFanOut(): void {
  useFanOut(webhookFanOut);
}
