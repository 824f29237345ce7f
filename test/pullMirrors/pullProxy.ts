import net from 'node:net';
import type { TestLike } from '../helpers/wharf.ts';

/** A TCP proxy in front of the source that can be slowed down and counts the connections open at once (the source's access log). */
export interface SourceProxy {
  port: number;
  /** Bytes per 100 ms sent to the client; 0 for no limit. */
  rate: number;
  open: number;
  maxOpen: number;
  connections: number;
  bytes: number;
}

export async function sourceProxy(t: TestLike, target: number): Promise<SourceProxy> {
  const state: SourceProxy = { port: 0, rate: 0, open: 0, maxOpen: 0, connections: 0, bytes: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    state.open++;
    state.connections++;
    state.maxOpen = Math.max(state.maxOpen, state.open);
    const queue: Buffer[] = [];
    let ended = false;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      state.open--;
      clearInterval(pump);
      client.destroy();
      upstream.destroy();
    };
    const pump = setInterval(() => {
      let budget = state.rate || Infinity;
      while (queue.length && budget > 0) {
        const part = queue[0].subarray(0, Math.min(queue[0].length, budget));
        queue[0] = queue[0].subarray(part.length);
        if (queue[0].length === 0) queue.shift();
        budget -= part.length;
        state.bytes += part.length;
        client.write(part);
      }
      if (ended && queue.length === 0) close();
    }, 100);
    upstream.on('data', (c) => queue.push(c));
    upstream.on('end', () => (ended = true));
    client.on('data', (c) => upstream.write(c));
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return state;
}
