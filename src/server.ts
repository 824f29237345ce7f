import http from 'node:http';
import { EventEmitter } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import { connect, migrate, type Db } from './db/connect.ts';
import { createLogger } from './log.ts';
import { createApp, type Mount } from './app.ts';
import type { Services } from './services.ts';
import { bootstrap, type BootstrapResult } from './domain/bootstrap.ts';
import { MOUNTS, WORKERS } from './components.ts';
import { openSecrets } from './secrets/boot.ts';
import type { WorkerFactory } from './work/worker.ts';
import { createLfsStore, ensureConfiguredBucket } from './lfs/fromConfig.ts';
import type { LfsStore } from './lfs/lfsStore.ts';
import { useFanOut } from './events/fanOut.ts';
import { webhookFanOut } from './webhooks/fanout.ts';

export type { Worker, WorkerFactory } from './work/worker.ts';

/** A running Wharf. */
export interface RunningServer {
  url: string;
  services: Services;
  server: http.Server;
  bootstrap: BootstrapResult | null;
  stop(): Promise<void>;
}

/** A start that could not take its address (PORT, HOST), with what to do about it in one sentence. */
export class ListenError extends Error {}

/** The sentence for a failed listen: a busy port and a privileged one are the usual cases on a first start. */
function listenError(err: unknown, config: Config): Error {
  const code = (err as NodeJS.ErrnoException)?.code;
  const port = config.port;
  if (code === 'EADDRINUSE')
    return new ListenError(`Port ${port} is in use: another program listens there. Set PORT to a free port (PORT=${port + 1} npm start).`);
  if (code === 'EACCES') return new ListenError(`Port ${port} needs privileges this user lacks. Set PORT to a port above 1023 (PORT=3000 npm start).`);
  if (code === 'EADDRNOTAVAIL') return new ListenError(`HOST ${config.host} is not an address of this machine. Set HOST to one (HOST=127.0.0.1 npm start).`);
  return err as Error;
}

/** Takes the address for a moment and lets it go, or throws the ListenError the real listen would (which still checks, later). */
async function probeListen(config: Config): Promise<void> {
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(config.port, config.host, () => resolve());
    });
  } catch (err) {
    throw listenError(err, config);
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/**
 * Opens the database, migrates, loads the secret key (refusing one that does not open the
 * stored secrets), creates the first admin on an empty database, serves, and starts the workers.
 * The outbox writes each event's deliveries through the webhook fan-out, registered here first.
 */
export async function startServer(
  config: Config,
  options: { db?: Db; logDestination?: NodeJS.WritableStream; mounts?: Mount[]; workers?: WorkerFactory[] } = {},
): Promise<RunningServer> {
  useFanOut(webhookFanOut);
  const log = createLogger(config.logLevel, options.logDestination);
  // A busy port is the commonest failed first start: say so before migrating, which can take a while.
  if (config.port !== 0) await probeListen(config);
  const db = options.db ?? connect(config.databaseUrl);
  let lfs: LfsStore;
  try {
    await migrate(db);
    config = await openSecrets(config, db);
    await ensureConfiguredBucket(config);
    // Made before listening, so a store that cannot load ends the start like the steps above.
    lfs = await createLfsStore(config);
  } catch (err) {
    if (!options.db) await db.destroy();
    throw err;
  }
  // Listen before building the app so that, with PORT=0, BASE_URL carries the real port.
  const server = http.createServer({
    // A client that stops mid-headers is answered 408 and closed.
    headersTimeout: config.requestHeadersTimeoutMs,
    // Node counts this until the whole request is received, a push's pack and an LFS upload
    // included (not the answer: a clone streams for as long as it takes), so it is long and
    // only a backstop; bodies have their own idle and total deadlines (src/http/deadlines.ts).
    requestTimeout: config.requestTimeoutMs,
    // How often Node checks those two deadlines (its default, 30 s, would overshoot short ones).
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(config.requestHeadersTimeoutMs / 4))),
  });
  server.keepAliveTimeout = 65_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (err) {
    // Nothing else is open yet: closing the database lets the process end instead of hanging.
    if (!options.db) await db.destroy();
    throw listenError(err, config);
  }
  // Only a start that listens creates the first admin, so the token it prints is one the user can use.
  const first = await bootstrap(db, config);
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const finalConfig = config.port === 0 ? { ...config, port, baseUrl: config.baseUrl.replace(/:0$/, `:${port}`) } : config;
  const services: Services = { config: finalConfig, db, log, lfs, signals: new EventEmitter(), listenUrl: url };
  const app = createApp(services, options.mounts ?? MOUNTS);
  server.on('request', app.callback());
  const workers = (options.workers ?? WORKERS).map((make) => make(services));
  for (const worker of workers) await worker.start();
  log.info({ url }, 'listening');

  let stopping: Promise<void> | undefined;
  return {
    url,
    services,
    server,
    bootstrap: first,
    stop() {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        for (const worker of workers) await worker.stop();
        setTimeout(() => server.closeAllConnections(), 5000).unref();
        await closed;
        if (!options.db) await db.destroy();
      })();
      return stopping;
    },
  };
}
