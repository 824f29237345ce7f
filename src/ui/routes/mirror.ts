import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { findMirror } from '../../pullMirrors/state.ts';
import { queueSync, stopMirroring } from '../../pullMirrors/cutover.ts';
import { WharfError } from '../../errors/wharfError.ts';
import { redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { renderPage } from '../layout.ts';
import { readerFor } from '../reader.ts';
import { requireUser } from '../user.ts';
import { stopMirroringForm } from '../pages/mirror.ts';

/** The repository of the path for its admins (the API's rule for these actions), and its mirror or a 404 page. */
async function mirrorContext(ctx: Context, services: Services) {
  requireUser(ctx);
  const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo, 'admin');
  const base = `/${repo.org}/${repo.name}`;
  return { repo, base };
}

/** Repository → mirror: Sync now, and Stop mirroring (the cutover) behind a confirmation page. */
export function mirrorRoutes(router: Router, services: Services) {
  const base = '/:org/:repo/mirror';

  router.post(`${base}/sync`, async (ctx) => {
    const { repo, base } = await mirrorContext(ctx, services);
    try {
      await queueSync(services, repo.repository);
    } catch (err) {
      if (err instanceof WharfError && err.code === 'conflict') return redirectWithFlash(ctx, base, 'This repository is not a mirror.', 'error');
      throw err;
    }
    redirectWithFlash(ctx, base, 'Sync queued.');
  });

  router.get(`${base}/stop`, async (ctx) => {
    const { repo, base } = await mirrorContext(ctx, services);
    const mirror = await findMirror(services.db, repo.id);
    if (!mirror) throw new PageError(404, 'Not found', 'This repository is not a mirror.');
    renderPage(
      ctx,
      { title: 'Stop mirroring', crumbs: [{ label: repo.org, href: `/${repo.org}` }, { label: repo.name, href: base }, { label: 'Stop mirroring' }] },
      stopMirroringForm(ctx, base, mirror),
    );
  });

  router.post(`${base}/stop`, async (ctx) => {
    const { repo, base } = await mirrorContext(ctx, services);
    try {
      await stopMirroring(services, repo.repository, requireUser(ctx));
    } catch (err) {
      if (err instanceof WharfError && err.code === 'conflict') return redirectWithFlash(ctx, base, err.message, 'error');
      throw err;
    }
    redirectWithFlash(ctx, base, 'Mirroring stopped: this repository now takes pushes.');
  });
}
