import type { Mount } from './http/app.ts';
import type { WorkerFactory } from './server.ts';
import { metricsMount } from './api/metrics.ts';
import { createDispatcher } from './delivery/dispatcher.ts';
import { gitMount } from './git/smartHttp.ts';
import { pullSyncWorker } from './domain/pullSync.ts';
import { createImportRunner } from './import/runner.ts';

/** Route groups served beside the REST API, in order (Git smart HTTP, web UI). */
export const MOUNTS: Mount[] = [metricsMount, gitMount];

/** Background workers started with the server (webhook dispatcher, import runner). */
export const WORKERS: WorkerFactory[] = [createDispatcher, pullSyncWorker, (services) => createImportRunner(services)];
