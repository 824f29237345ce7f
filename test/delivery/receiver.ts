import http from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { TestLike } from '../helpers/wharf.ts';

/** One request the receiver got, with its signature checks. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  path: string;
  guid: string;
  event: string;
  attempt: number;
  hookId: number;
  /** When it arrived (epoch ms). */
  at: number;
  /** X-Service-Signature recomputed from the secret and compared whole, in constant time. */
  signatureOk: boolean;
  /** Standard Webhooks signature checked (null when the secret is not whsec_). */
  standardOk: boolean | null;
}

/** A request as it arrived, counted when its headers came, whether its body was read or not. */
export interface Arrival {
  guid: string;
  event: string;
  attempt: number;
  hookId: number;
  path: string;
}

/** What the receiver answers; `delayMs` holds the answer back. */
export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
  /** Drop the connection instead of answering (after `delayMs`). */
  reset?: boolean;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Verifies a Standard Webhooks signature as a receiver library would. */
export function standardValid(secret: string, headers: http.IncomingHttpHeaders, body: Buffer): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const id = String(headers['webhook-id'] ?? '');
  const ts = String(headers['webhook-timestamp'] ?? '');
  if (!id || !/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const expected = `v1,${createHmac('sha256', key).update(`${id}.${ts}.`).update(body).digest('base64')}`;
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((sig) => same(sig, expected));
}

/** A real HTTP receiver on a loopback port that records and verifies every delivery. */
export async function startReceiver(t: TestLike, respond: (r: Received, index: number) => Answer = () => ({})) {
  const received: Received[] = [];
  const arrivals: Arrival[] = [];
  const secrets = new Map<number, string>();
  let answer = respond;
  const server = http.createServer((req, res) => {
    arrivals.push({
      guid: String(req.headers['x-service-delivery'] ?? ''),
      event: String(req.headers['x-service-event'] ?? ''),
      attempt: Number(req.headers['x-service-delivery-attempt']),
      hookId: Number(req.headers['x-service-hook-id']),
      path: req.url ?? '/',
    });
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const hookId = Number(req.headers['x-service-hook-id']);
      const sig = String(req.headers['x-service-signature'] ?? '');
      const r: Received = {
        headers: req.headers,
        body,
        path: req.url ?? '/',
        guid: String(req.headers['x-service-delivery'] ?? ''),
        event: String(req.headers['x-service-event'] ?? ''),
        attempt: Number(req.headers['x-service-delivery-attempt']),
        hookId,
        at: Date.now(),
        // Checked when read, not on arrival: the ping sent on creation can arrive before
        // the test has learned the secret from the 201 answer.
        get signatureOk() {
          const secret = secrets.get(hookId);
          return secret !== undefined && same(sig, `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`);
        },
        get standardOk() {
          const secret = secrets.get(hookId);
          return secret?.startsWith('whsec_') ? standardValid(secret, req.headers, body) : null;
        },
      };
      const index = received.length;
      received.push(r);
      const a = answer(r, index);
      const send = () => {
        if (res.destroyed) return;
        if (a.reset) return void req.socket.destroy();
        res.writeHead(a.status ?? 200, { 'content-type': 'text/plain', ...a.headers });
        res.end(a.body ?? 'ok');
      };
      if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url,
    received,
    /** Every request whose headers arrived, in order: what a receiver that counts requests counts. */
    arrivals,
    secrets,
    /** Changes how the receiver answers from now on. */
    answer(fn: (r: Received, index: number) => Answer) {
      answer = fn;
    },
    server,
  };
}
