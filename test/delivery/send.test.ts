// One HTTP attempt (src/delivery/attempt/http/send.ts) against real loopback servers: what is kept of
// the answer, and how each way of failing is told apart.
import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { sendAttempt, RESPONSE_BODY_LIMIT } from '../../src/delivery/attempt/http/send.ts';
import type { TestLike } from '../helpers/wharf.ts';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function serve(t: TestLike, handler: Handler): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?x=1`;
}

function agent(t: TestLike) {
  const a = new Agent({ keepAliveTimeout: 1000 });
  t.teardown(() => a.destroy());
  return a;
}

const body = Buffer.from('{"event":"ping"}');
const headers = { 'content-type': 'application/json', 'x-service-event': 'ping' };

t.test('a 2xx answer: status, headers and body are kept; the request arrives as sent', async (t) => {
  let seen: { method?: string; url?: string; event?: string } = {};
  const url = await serve(t, (req, res) => {
    seen = { method: req.method, url: req.url, event: req.headers['x-service-event'] as string };
    res.writeHead(202, { 'x-answer': 'yes', 'set-cookie': ['a=1', 'b=2'] }).end('thanks');
  });
  const o = await sendAttempt(agent(t), url, headers, body, 2000);
  t.same(seen, { method: 'POST', url: '/hook?x=1', event: 'ping' }, 'path and query kept');
  t.match(o, { statusCode: 202, error: null, responseBody: 'thanks' });
  t.equal(o.responseHeaders!['x-answer'], 'yes');
  t.equal(o.responseHeaders!['set-cookie'], 'a=1, b=2', 'repeated headers joined');
  t.ok(o.endedAt >= o.startedAt && o.durationMs >= 0);
});

t.test('a redirect is an answer, not followed', async (t) => {
  let hits = 0;
  const url = await serve(t, (_req, res) => {
    hits++;
    res.writeHead(302, { location: '/elsewhere' }).end();
  });
  const o = await sendAttempt(agent(t), url, headers, body, 2000);
  t.match(o, { statusCode: 302, error: null, responseBody: '' });
  t.equal(hits, 1);
});

t.test('an informational answer before the real one is skipped', async (t) => {
  const url = await serve(t, (_req, res) => {
    res.writeProcessing();
    res.writeHead(200).end('done');
  });
  t.match(await sendAttempt(agent(t), url, headers, body, 2000), { statusCode: 200, responseBody: 'done' });
});

t.test('a response body that never ends: the first 64 KiB are kept and the attempt ends', async (t) => {
  const url = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = 'x'.repeat(16 * 1024);
    const pump = () => {
      while (res.write(chunk));
      res.once('drain', pump);
    };
    pump();
  });
  const o = await sendAttempt(agent(t), url, headers, body, 5000);
  t.equal(o.statusCode, 200);
  t.equal(o.error, null);
  t.equal(o.responseBody!.length, RESPONSE_BODY_LIMIT, 'exactly 64 KiB');
});

t.test('a NUL in the response body is kept as U+FFFD', async (t) => {
  const url = await serve(t, (_req, res) => res.writeHead(200).end(Buffer.from('a\0b')));
  t.equal((await sendAttempt(agent(t), url, headers, body, 2000)).responseBody, 'a\uFFFDb');
});

t.test('timeouts: no answer at all, and an answer whose body trickles past the limit', async (t) => {
  const silent = await serve(t, () => {});
  const o = await sendAttempt(agent(t), silent, headers, body, 300);
  t.match(o, { statusCode: null, error: 'timeout', responseHeaders: null, responseBody: null });
  t.ok(o.durationMs >= 250 && o.durationMs < 2000, `ended near the limit (${o.durationMs} ms)`);
  const trickle = await serve(t, (_req, res) => {
    res.writeHead(200);
    const timer = setInterval(() => res.write('.'), 50);
    res.on('close', () => clearInterval(timer));
  });
  const p = await sendAttempt(agent(t), trickle, headers, body, 300);
  t.match(p, { statusCode: null, error: 'timeout' }, 'the whole exchange, body included, is bounded');
});

t.test('connection errors: refused, and reset mid-answer', async (t) => {
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  t.match(await sendAttempt(agent(t), `http://127.0.0.1:${port}/`, headers, body, 2000), { statusCode: null, error: 'connection refused' });
  const rude = await serve(t, (req) => req.socket.destroy());
  t.match(await sendAttempt(agent(t), rude, headers, body, 2000), { statusCode: null, error: 'connection reset' });
});

// SPEC §5.3: an attempt counts once its request has started, and a receiver that keeps
// failing sees exactly the schedule's attempts. A busy event loop must not turn an attempt
// into a `timeout` that never left this process: the connection was up, the request unsent.
t.test('an event loop busy for longer than the time-out while connecting: the request is still sent, and its answer recorded', async (t) => {
  let arrived = 0;
  const url = await serve(t, (_req, res) => {
    arrived++;
    res.writeHead(200).end('ok');
  });
  const attempt = sendAttempt(agent(t), url, headers, body, 300);
  const busyUntil = Date.now() + 600;
  while (Date.now() < busyUntil); // the process stalls (GC, a big JSON, a recording burst) before the connect event is handled
  const o = await attempt;
  t.equal(arrived, 1, 'the receiver got the request');
  t.match(o, { statusCode: 200, error: null }, 'the attempt is its answer, not a timeout that was never sent');
});

t.test('an event loop busy after the request went out: a late answer is still a timeout', async (t) => {
  let arrived = 0;
  const url = await serve(t, (_req, res) => {
    arrived++;
    setTimeout(() => res.writeHead(200).end('late'), 600);
  });
  const o = await sendAttempt(agent(t), url, headers, body, 300);
  t.equal(arrived, 1);
  t.match(o, { statusCode: null, error: 'timeout' });
});

t.test('an answer that came in time while the event loop was busy is the answer, not a timeout', async (t) => {
  const url = await serve(t, (_req, res) => {
    res.writeHead(200).end('in time');
    const busyUntil = Date.now() + 600;
    while (Date.now() < busyUntil); // answered at once; then this process stalls past the time-out
  });
  const o = await sendAttempt(agent(t), url, headers, body, 300);
  t.match(o, { statusCode: 200, error: null, responseBody: 'in time' });
});

t.test('an answer taken in time during a stall keeps its connection: the next attempt reuses it', async (t) => {
  let stall = true;
  let connections = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200).end('in time');
      if (!stall) return;
      stall = false;
      const busyUntil = Date.now() + 600;
      while (Date.now() < busyUntil); // the time-out fires during this stall, after the answer came in
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const a = agent(t);
  const first = await sendAttempt(a, url, headers, body, 300);
  await new Promise((r) => setTimeout(r, 50)); // the late time-out, if any, has run
  const second = await sendAttempt(a, url, headers, body, 300);
  t.match([first.statusCode, second.statusCode], [200, 200], 'both answered');
  t.equal(connections, 1, 'one keep-alive connection for both');
});
