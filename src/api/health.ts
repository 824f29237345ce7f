import fs from 'node:fs/promises';
import { constants } from 'node:fs';
import type Router from '@koa/router';
import type { Services } from '../services.ts';
import { version } from '../version.ts';

/** GET /health and GET /meta: the two endpoints that need no token. */
export function healthRoutes(router: Router, { db, config }: Services) {
  router.get('/health', async (ctx) => {
    const checks = { database: 'ok', repos_dir: 'ok' };
    try {
      await db.raw('select 1');
    } catch {
      checks.database = 'unreachable';
    }
    try {
      await fs.mkdir(config.reposDir, { recursive: true });
      await fs.access(config.reposDir, constants.W_OK);
    } catch {
      checks.repos_dir = 'not writable';
    }
    const ok = checks.database === 'ok' && checks.repos_dir === 'ok';
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'unavailable', ...checks };
  });

  router.get('/meta', (ctx) => {
    ctx.body = { hooks: config.deliverySourceRanges, version };
  });
}
