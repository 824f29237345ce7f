import type { Mount } from './app.ts';
import type { WorkerFactory } from './work/worker.ts';
import { metricsMount } from './api/metrics.ts';
import { createDispatcher } from './delivery/runtime/dispatcher.ts';
import { gitMount } from './transport/git/smartHttp.ts';
import { pushRecorder } from './pushes/recorder.ts';
import { createImportRunner } from './import/runner.ts';
import { createMirrorRunner } from './pullMirrors/runner.ts';
import { uiMount } from './ui/index.ts';
import { pushMirrorWorker } from './pushMirrors/worker.ts';
import { rateLimitSweeper } from './http/rateLimit.ts';

/** Route groups served beside the REST API, in order (Git smart HTTP, web UI). */
// The web UI stays last: Git transport paths under /<org>/<repo> must match first.
export const MOUNTS: Mount[] = [metricsMount, gitMount, uiMount];

/** Background workers started with the server (push recorder, webhook dispatcher, import runner, pull-mirror runner, push-mirror worker, the rate-limit sweeper). */
// The push recorder stops first, so the events it records while draining still reach the others.
export const WORKERS: WorkerFactory[] = [
  pushRecorder,
  createDispatcher,
  (services) => createImportRunner(services),
  (services) => createMirrorRunner(services),
  pushMirrorWorker,
  rateLimitSweeper,
];
