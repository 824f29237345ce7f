import type { Services } from '../services.ts';

/** A background part of the service (delivery dispatcher, push recorder, import runner) started and stopped with it. */
export interface Worker {
  start(): Promise<void>;
  /** Stops taking new work and waits for work in flight. */
  stop(): Promise<void>;
}

/** Builds a worker from the running service's parts. */
export type WorkerFactory = (services: Services) => Worker;
