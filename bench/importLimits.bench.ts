import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Bench } from './run.ts';
import { fetchLfsObjects } from '../src/remote/lfsFetch.ts';
import { createFsLfsStore } from '../src/lfs/fsStore.ts';
import { parseHostPolicy } from '../src/net/hostPolicy.ts';

const ANSWER_MIB = 200;

/**
 * Peak RSS of this process while an import reads a 200 MiB LFS batch answer (served on
 * loopback as fast as it is read): the answer must be dropped at its 16 MiB cap while it
 * streams, not read whole first.
 */
const bench: Bench = async (report) => {
  const server = http.createServer(async (req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/vnd.git-lfs+json' });
    let closed = false;
    res.on('close', () => (closed = true));
    const chunk = Buffer.alloc(1024 * 1024, ' ');
    res.write('{"objects":[');
    // Each wait takes its close listener back when drain comes first (else one is left per wait).
    const writable = () =>
      new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    for (let i = 0; i < ANSWER_MIB && !closed; i++) if (!res.write(chunk)) await writable();
    res.end(']}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-bench-limits-'));
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  try {
    const { missing } = await fetchLfsObjects([{ oid: 'a'.repeat(64), size: 10 }], {
      url: new URL(`http://127.0.0.1:${port}/x/y.git`),
      endpoint: `http://127.0.0.1:${port}/lfs`,
      credentials: null,
      policy: parseHostPolicy(['loopback']),
      lfs: createFsLfsStore(path.join(dir, 'lfs')),
      journal: path.join(dir, 'journal'),
      stallMs: 60_000,
      signal: new AbortController().signal,
    });
    const growth = (peak - before) / 1024 / 1024;
    report({
      figure: 'rss growth reading a 200 MiB LFS batch answer',
      value: Math.round(growth),
      unit: 'MiB',
      target: '< 64 MiB (the answer is dropped at its 16 MiB cap)',
      met: growth < 64,
      error: missing[0]?.error,
    });
  } finally {
    clearInterval(sampler);
    server.closeAllConnections();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
