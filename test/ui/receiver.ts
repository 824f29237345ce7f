import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestLike } from '../helpers/wharf.ts';

/** A request a receiver got. */
export interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A loopback HTTP receiver: `/ok…` answers 200 "thanks", `/slow…` never answers, anything else 500 "nope"; it records every request. */
export async function startReceiver(t: TestLike): Promise<{ url: string; hits: Hit[] }> {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      if ((req.url ?? '').startsWith('/slow')) return; // held open until the sender gives up
      const ok = (req.url ?? '').startsWith('/ok');
      res.writeHead(ok ? 200 : 500, { 'content-type': 'text/plain', 'x-receiver': 'ui-test' });
      res.end(ok ? 'thanks' : 'nope');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}
