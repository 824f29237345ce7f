import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { openWebhookSecret, standardWebhooksKey } from '../../../webhooks/secret.ts';
import { version } from '../../../version.ts';

const USER_AGENT = `Wharf-Hookshot/${version}`;

/**
 * The signing keys of a stored (sealed) secret, made once: every delivery of a webhook
 * is signed with the same ones, so the secret is opened (AES-GCM) once per stored value,
 * not once per attempt. A changed or re-sealed secret is a new stored value, a new entry.
 */
const keys = new Map<string, { signature: KeyObject; standard: KeyObject | null }>();

function keysOf(stored: string) {
  let k = keys.get(stored);
  if (k === undefined) {
    if (keys.size > 10_000) keys.clear();
    const secret = openWebhookSecret(stored);
    const standard = standardWebhooksKey(secret);
    keys.set(stored, (k = { signature: createSecretKey(Buffer.from(secret, 'utf8')), standard: standard && createSecretKey(standard) }));
  }
  return k;
}

/**
 * The headers of one attempt (SPEC §5.3); `secret` is the webhook's stored (sealed) secret. `X-Service-Signature` is the lowercase hex
 * HMAC-SHA256 of the exact body bytes keyed by the secret's UTF-8 bytes; for a
 * `whsec_` secret the Standard Webhooks headers are added too, signed over
 * `guid.timestamp.body` with the decoded key, with a fresh timestamp on every attempt
 * so receivers can reject replays while deduping on the unchanged id. With `github`
 * (a webhook of `header_style: "github"`), GitHub's names for the event, delivery, hook
 * and signature headers are added with the same values, so receivers written for GitHub
 * read the delivery unchanged.
 */
export function deliveryHeaders(d: {
  guid: string;
  event: string;
  attempt: number;
  hookId: number;
  secret: string;
  body: Buffer;
  now: number;
  github?: boolean;
}): Record<string, string> {
  const key = keysOf(d.secret);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-event': d.event,
    'x-service-delivery': d.guid,
    'x-service-delivery-attempt': String(d.attempt),
    'x-service-hook-id': String(d.hookId),
    'x-service-signature': `sha256=${createHmac('sha256', key.signature).update(d.body).digest('hex')}`,
  };
  if (d.github) {
    headers['x-github-event'] = headers['x-service-event'];
    headers['x-github-delivery'] = headers['x-service-delivery'];
    headers['x-github-hook-id'] = headers['x-service-hook-id'];
    headers['x-hub-signature-256'] = headers['x-service-signature'];
  }
  if (key.standard) {
    const timestamp = String(Math.floor(d.now / 1000));
    const signed = createHmac('sha256', key.standard).update(`${d.guid}.${timestamp}.`).update(d.body).digest('base64');
    headers['webhook-id'] = d.guid;
    headers['webhook-timestamp'] = timestamp;
    headers['webhook-signature'] = `v1,${signed}`;
  }
  return headers;
}
