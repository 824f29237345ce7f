// Deliveries to a raw TCP receiver answering junk: random status lines and headers,
// huge headers and bodies, chunked bodies valid and not, connections closed or reset
// mid-answer, silence until the timeout and answers after it. The dispatcher (in this
// process, so an unhandled 'error' or rejection fails the test) must survive every
// one, end every delivery with one recorded attempt (a status or an error), and count
// exactly the attempts it recorded.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import t from 'tap';
import { startWharf } from '../helpers/wharf.ts';
import { waitFor } from '../helpers/wait.ts';
import { deliveryMetrics } from '../../src/delivery/attempt/metrics.ts';
import { SEED } from './harness.ts';

const TIMEOUT_MS = 400;
const RUNS = Number(process.env.FUZZ_RUNS ?? 6);

/** One junk answer: bytes written in pieces, then how the connection ends. */
interface Junk {
  delayMs: number;
  pieces: Buffer[];
  pieceDelayMs: number;
  end: 'end' | 'destroy' | 'reset' | 'hang';
}

const statusLine = fc.oneof(
  fc.integer({ min: 100, max: 999 }).map((code) => `HTTP/1.1 ${code} Whatever\r\n`),
  fc.constantFrom(
    'HTTP/1.1 200 OK\r\n',
    'HTTP/1.0 204 No Content\r\n',
    'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n',
    'HTTP/2 200\r\n',
    'HTTP/1.1 2000 OK\r\n',
    'HTTP/1.1 -1\r\n',
    'SSH-2.0-OpenSSH\r\n',
    '\r\n',
    'HTTP/1.1 200 OK\n',
    '',
  ),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
);
const header = fc.oneof(
  fc
    .tuple(fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 20 }), fc.string({ unit: 'binary-ascii', maxLength: 40 }))
    .map(([k, v]) => `${k}: ${v}\r\n`),
  fc.constantFrom(
    'Content-Length: 5\r\n',
    'Content-Length: 999999\r\n',
    'Content-Length: -1\r\n',
    'Content-Length: 5\r\nContent-Length: 6\r\n',
    'Transfer-Encoding: chunked\r\n',
    'Transfer-Encoding: gzip, chunked\r\n',
    'Transfer-Encoding: chunked\r\nContent-Length: 3\r\n',
    'Retry-After: 99999999999\r\n',
    'Connection: close\r\n',
    'Connection: keep-alive\r\n',
    'Keep-Alive: timeout=0\r\n',
    'Upgrade: websocket\r\nConnection: upgrade\r\n',
    'Content-Type: text/plain; charset=\u00ff\r\n',
    'X-Nul: a\u0000b\r\n',
    'Folded: a\r\n b\r\n',
  ),
  fc.integer({ min: 1, max: 40 }).map((k) => `X-Huge: ${'h'.repeat(k * 1024)}\r\n`),
);
const body = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom(
    '5\r\nhello\r\n0\r\n\r\n',
    'zz\r\nhello\r\n0\r\n\r\n',
    '5\r\nhel',
    'ffffffff\r\nx',
    '3\r\nabcdef\r\n0\r\n\r\n',
    '0\r\n\r\n',
    '-1\r\n',
    '5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n',
    '',
  ),
  fc.integer({ min: 1, max: 200 }).map((k) => 'b'.repeat(k * 1024)),
);
const junk: fc.Arbitrary<Junk> = fc.record({
  // Mostly quick, some around and past the timeout (an answer after it).
  delayMs: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: TIMEOUT_MS + 200 }) }),
  pieces: fc.tuple(statusLine, fc.array(header, { maxLength: 4 }), fc.constantFrom('\r\n', '\r\n', ''), body).chain(([s, hs, blank, b]) => {
    const whole = Buffer.from(s + hs.join('') + blank + b, 'latin1');
    return fc.array(fc.integer({ min: 0, max: whole.length }), { maxLength: 3 }).map((cuts) => {
      const at = [...new Set([0, ...cuts.sort((x, y) => x - y), whole.length])];
      return at.slice(1).map((end, i) => whole.subarray(at[i], end));
    });
  }),
  pieceDelayMs: fc.integer({ min: 0, max: 50 }),
  end: fc.constantFrom('end', 'end', 'destroy', 'reset', 'hang'),
});

t.test(
  'deliveries answered with junk over raw TCP: the process survives, every delivery ends with one recorded attempt, attempts counted = recorded',
  async (t) => {
    const answers = new Map<string, Junk>();
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
      let head = '';
      let answered = false;
      socket.on('data', (chunk) => {
        if (answered) return;
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        answered = true;
        const path = /^POST (\S+)/.exec(head)?.[1] ?? '';
        const a = answers.get(path);
        if (!a) return void socket.destroy();
        void (async () => {
          await new Promise((r) => setTimeout(r, a.delayMs));
          for (const piece of a.pieces) {
            if (socket.destroyed) return;
            socket.write(piece);
            if (a.pieceDelayMs) await new Promise((r) => setTimeout(r, a.pieceDelayMs));
          }
          if (socket.destroyed) return;
          if (a.end === 'end') socket.end();
          else if (a.end === 'destroy') socket.destroy();
          else if (a.end === 'reset') socket.resetAndDestroy();
          // 'hang': say nothing more; the sender's timeout ends it.
        })();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const port = (server.address() as AddressInfo).port;
    const w = await startWharf(t, { env: { WEBHOOK_ALLOWED_HOSTS: 'loopback', WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms`, WEBHOOK_RETRY_SCHEDULE: '0s' } });
    const db = w.running.services.db;
    const metrics = deliveryMetrics(w.running.services);
    let n = 0;
    let cases = 0;
    let run = 0;

    await fc.assert(
      fc.asyncProperty(fc.array(junk, { minLength: 4, maxLength: 8 }), async (list) => {
        // One webhook per junk answer (a repository of its own per run: 20 webhooks at most each): its creation ping is the delivery that meets it.
        const repo = `r${++run}`;
        if ((await w.api('POST', '/api/v1/orgs/demo/repos', { body: { name: repo } })).status !== 201) throw new Error('repository not created');
        const hooks: number[] = [];
        await Promise.all(
          list.map(async (a) => {
            const path = `/case/${++n}`;
            answers.set(path, a);
            const hook = await w.api('POST', `/api/v1/repos/demo/${repo}/webhooks`, { body: { url: `http://127.0.0.1:${port}${path}`, events: ['push'] } });
            if (hook.status !== 201) throw new Error(`webhook not created: ${hook.status} ${hook.text}`);
            hooks.push(Number(hook.body.id));
          }),
        );
        cases += list.length;
        // Bounded by the result: one attempt each, at most the timeout, and a lease's end should one be lost.
        const rows = await waitFor(
          async () => {
            const r = await db('deliveries').whereIn('webhook_id', hooks).select('id', 'status', 'attempts', 'status_code', 'error');
            return r.length === hooks.length && r.every((d) => d.status !== 'pending') ? r : null;
          },
          { what: 'every delivery to end', timeoutMs: 30_000 },
        );
        const attempts = await db('delivery_attempts')
          .whereIn(
            'delivery_id',
            rows.map((r) => r.id),
          )
          .select('delivery_id', 'status_code', 'error');
        for (const r of rows) {
          const mine = attempts.filter((a) => Number(a.delivery_id) === Number(r.id));
          if (Number(r.attempts) !== 1 || mine.length !== 1) throw new Error(`delivery ${r.id}: ${r.attempts} attempts counted, ${mine.length} recorded`);
          const ok =
            r.status === 'success'
              ? r.status_code >= 200 && r.status_code < 300
              : r.status_code !== null || (typeof r.error === 'string' && r.error.length > 0);
          if (!ok) throw new Error(`delivery ${r.id} ended ${r.status} with neither a status nor an error: ${JSON.stringify(r)}`);
        }
        const [{ n: recorded }] = (await db('delivery_attempts').count({ n: '*' })) as any[];
        const counted = metrics.attemptsTotal;
        if (counted !== Number(recorded)) throw new Error(`attempts counted ${counted}, recorded ${recorded}`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    const health = await w.api('GET', '/api/v1/health', { token: null });
    t.equal(health.status, 200, 'the server still answers');
    t.equal(metrics.inFlight, 0, 'nothing left in flight');
    t.comment(`# fuzz deliveryStreams: ${cases} junk answers (FUZZ_SEED=${SEED})`);
  },
);
