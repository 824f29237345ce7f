import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { Readable } from 'node:stream';
import { listFolderAt, streamBlob } from '../../git/tree.ts';
import { codeHref, objectOf, pathNotFound, resolveCodeAddress, type CodeAddress } from '../code/address.ts';
import { blobContent, lfsPointerIn, servableLfsSize, SHOWN_LIMIT } from '../code/content.ts';
import { folderView } from '../code/folder.ts';
import { sendRaw } from '../code/raw.ts';
import { PageError } from '../errors.ts';
import { html, type SafeHtml } from '../html.ts';
import { renderPage } from '../layout.ts';
import { blobView } from '../pages/codeBlob.ts';
import { pathTrail } from '../pages/codeTree.ts';
import { repoHeader } from './repo.ts';

/** A raw file this small comes with its look-up and is sent from memory; a larger one streams from its own git. */
const RAW_IN_MEMORY = 64 * 1024;

function codePage(ctx: Context, at: CodeAddress, body: SafeHtml): void {
  const { repo, revision, path } = at;
  const title = path.length ? `${path.join('/')} at ${revision.name} · ${repo.full_name}` : `${repo.full_name} at ${revision.name}`;
  renderPage(
    ctx,
    {
      title,
      crumbs: [{ label: repo.org, href: `/${repo.org}` }, { label: repo.name, href: `/${repo.org}/${repo.name}` }, { label: path.join('/') || revision.name }],
    },
    html`${repoHeader(repo, repo.access.admin, 'code')}${pathTrail(repo, revision, path)}${body}`,
  );
}

/**
 * The file browser (SPEC §12): `tree/<ref>/<path>` a folder, `blob/<ref>/<path>` a file,
 * `raw/<ref>/<path>` its bytes, at any branch, tag or commit, for whoever may read the
 * repository. A folder's address under blob/ and a file's under tree/ send to the right one, as GitHub does.
 */
export function codeRoutes(router: Router, services: Services) {
  router.get('/:org/:repo/tree/{*rest}', async (ctx) => {
    const at = await resolveCodeAddress(ctx, services, ctx.params.rest);
    // The listing is asked for first: a folder, the common case, costs one git.
    const entries = await listFolderAt(at.dir, at.revision.commit, at.path);
    if (!entries) {
      const found = await objectOf(at);
      if (found.object.type === 'blob') return ctx.redirect(codeHref(at.repo, 'blob', at.revision.name, at.path));
      throw pathNotFound(at);
    }
    codePage(ctx, at, await folderView(at.dir, at.repo, at.revision, at.path, entries));
  });

  router.get('/:org/:repo/blob/{*rest}', async (ctx) => {
    const at = await resolveCodeAddress(ctx, services, ctx.params.rest);
    const { object, content: bytes } = await objectOf(at, SHOWN_LIMIT);
    if (object.type === 'tree') return ctx.redirect(codeHref(at.repo, 'tree', at.revision.name, at.path));
    const content = blobContent(object.size, bytes);
    const lfsSize = content.kind === 'lfs' ? await servableLfsSize(services, at.repo.id, content.pointer.oid) : undefined;
    codePage(ctx, at, blobView({ repo: at.repo, revision: at.revision, path: at.path, content, lfsSize, plain: ctx.query.plain === '1' }));
  });

  router.get('/:org/:repo/raw/{*rest}', async (ctx) => {
    const at = await resolveCodeAddress(ctx, services, ctx.params.rest);
    const { object, content } = await objectOf(at, RAW_IN_MEMORY);
    if (object.type === 'tree') throw new PageError(404, 'Not found', `${at.path.join('/') || 'The root'} is a folder, not a file.`);
    const name = at.path[at.path.length - 1];
    // An LFS file's raw bytes are its object's, served only when the object is linked to this repository.
    const pointer = lfsPointerIn(content);
    if (pointer) {
      const size = await servableLfsSize(services, at.repo.id, pointer.oid);
      if (size === null) throw new PageError(404, 'Not found', `The Git LFS object of ${name} is missing from this repository.`);
      return sendRaw(ctx, await services.lfs.open(pointer.oid), size, name);
    }
    await sendRaw(ctx, content ? Readable.from([content]) : streamBlob(at.dir, object.id), object.size, name);
  });
}
