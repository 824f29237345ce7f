import { createHmac } from 'node:crypto';
import { standardWebhooksKey } from '../webhooks/secret.ts';
import { version } from '../version.ts';

const USER_AGENT = `Wharf-Hookshot/${version}`;

/**
 * The headers of one attempt (SPEC §5.3). `X-Service-Signature` is the lowercase hex
 * HMAC-SHA256 of the exact body bytes keyed by the secret's UTF-8 bytes; for a
 * `whsec_` secret the Standard Webhooks headers are added too, signed over
 * `guid.timestamp.body` with the decoded key, with a fresh timestamp on every attempt
 * so receivers can reject replays while deduping on the unchanged id.
 */
export function deliveryHeaders(d: { guid: string; event: string; attempt: number; hookId: number; secret: string; body: Buffer; now: number }): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-event': d.event,
    'x-service-delivery': d.guid,
    'x-service-delivery-attempt': String(d.attempt),
    'x-service-hook-id': String(d.hookId),
    'x-service-signature': `sha256=${createHmac('sha256', Buffer.from(d.secret, 'utf8')).update(d.body).digest('hex')}`,
  };
  const key = standardWebhooksKey(d.secret);
  if (key) {
    const timestamp = String(Math.floor(d.now / 1000));
    const signed = createHmac('sha256', key).update(`${d.guid}.${timestamp}.`).update(d.body).digest('base64');
    headers['webhook-id'] = d.guid;
    headers['webhook-timestamp'] = timestamp;
    headers['webhook-signature'] = `v1,${signed}`;
  }
  return headers;
}
