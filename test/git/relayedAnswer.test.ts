// The hand-over of an answer to the relay loses no byte the server had already read: a
// backend whose output waits in the server's stream buffer when the hand-over comes (as
// after a pause for backpressure) still reaches the client whole and in order.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pino from 'pino';
import t from 'tap';
import { RELAY_AFTER } from '../../src/transport/git/packRelay.ts';
import { relayedAnswer } from '../../src/transport/git/relayedAnswer.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('bytes waiting in the server when the relay takes over are sent before the relay’s', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-relayed-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const rest = randomBytes(3 * 1024 * 1024);
  fs.writeFileSync(path.join(dir, 'rest.bin'), rest);
  // The first piece alone reaches the hand-over point.
  const first = randomBytes(RELAY_AFTER + 1);
  const app = new Koa();
  app.use(async (ctx) => {
    const backend = spawn('cat', [path.join(dir, 'rest.bin')], { stdio: ['ignore', 'pipe', 'ignore'] });
    // Nothing flows until the answer starts: the stream's buffer fills (to its high-water mark) meanwhile.
    backend.stdout.pause();
    await new Promise<void>((resolve) => {
      const full = () => (backend.stdout.readableLength >= backend.stdout.readableHighWaterMark ? resolve() : setTimeout(full, 5));
      full();
    });
    t.ok(backend.stdout.readableLength > 0, `${backend.stdout.readableLength} bytes wait in the server's buffer`);
    const answer = relayedAnswer(ctx, backend.stdout, first, {
      headers: [['Content-Type', 'application/octet-stream']],
      idleMs: 10_000,
      log: pino({ level: 'silent' }),
      onCut: () => {},
    });
    backend.on('close', () => void answer.finish());
  });
  const server = app.listen(0, '127.0.0.1');
  t.teardown(() => void server.close());
  await new Promise((resolve) => server.once('listening', resolve));
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const body = Buffer.from(await res.arrayBuffer());
  t.equal(res.headers.get('connection'), 'close', 'the answer runs to the end of the connection');
  t.equal(body.length, first.length + rest.length, 'every byte came');
  t.equal(sha(body), sha(Buffer.concat([first, rest])), 'in order');
});
