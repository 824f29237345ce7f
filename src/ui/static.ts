import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Context, Next } from 'koa';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');
const TYPES: Record<string, string> = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };

interface Asset {
  type: string;
  body: Buffer;
  etag: string;
}

// Read once at start: two small files, and no path from a request ever reaches the file system.
function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of fs.readdirSync(DIR)) {
    const type = TYPES[path.extname(name)];
    if (!type) continue;
    const body = fs.readFileSync(path.join(DIR, name));
    assets.set(`/-/static/${name}`, { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` });
  }
  return assets;
}

/** Serves the UI's stylesheet and script under /-/static/, revalidated by ETag. */
export function staticAssets() {
  const assets = loadAssets();
  return async function serveStatic(ctx: Context, next: Next) {
    const asset = assets.get(ctx.path);
    if (!asset || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', asset.etag);
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (ctx.get('if-none-match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
}
