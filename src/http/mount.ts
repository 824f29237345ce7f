import type Koa from 'koa';
import type { Services } from '../services.ts';

/** A route group mounted beside the REST API (Git transport, web UI, /metrics), in order. */
export type Mount = (app: Koa, services: Services) => void;
