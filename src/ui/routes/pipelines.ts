import type Router from '@koa/router';
import type { Services } from '../../services.ts';
import { findPipeline, listPipelines, type Pipeline } from '../../domain/pipelines.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { readerFor, type SeenRepo } from '../reader.ts';
import { shortSha, timeTag } from '../format.ts';
import { cursorParam, numberParam, olderLink } from '../pages/thread.ts';
import { repoHeader } from './repo.ts';

const PAGE_SIZE = 25;

const STATUS_KIND: Record<Pipeline['status'], string> = { queued: 'wait', running: 'wait', success: 'ok', failed: 'bad', canceled: 'bad' };

/** A pipeline's status as a badge. */
function statusBadge(p: Pipeline) {
  return html`<span class="result ${STATUS_KIND[p.status]}">${p.status[0].toUpperCase() + p.status.slice(1)}</span>`;
}

function crumbs(repo: SeenRepo, last: string, listed = true) {
  const base = `/${repo.org}/${repo.name}`;
  return [
    { label: repo.org, href: `/${repo.org}` },
    { label: repo.name, href: base },
    ...(listed ? [{ label: 'Pipelines', href: `${base}/pipelines` }] : []),
    { label: last },
  ];
}

/**
 * Pipeline pages: the runs outside CI systems reported (newest first) and a run's page,
 * where the `url` of its payloads and API answers leads. Read-only: pipelines are
 * reported through the API.
 */
export function pipelineRoutes(router: Router, services: Services) {
  const { db } = services;

  router.get('/:org/:repo/pipelines', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
    const base = `/${repo.org}/${repo.name}`;
    const pipelines = await listPipelines(db, repo.repository, { limit: PAGE_SIZE, before: cursorParam(ctx.query.before) });
    const list = pipelines.length
      ? html`<ul class="list">${pipelines.map(
          (p) =>
            html`<li class="row"><span><a class="strong" href="${base}/pipelines/${p.id}">${p.name}</a> <span class="muted">#${p.id}</span> ${statusBadge(p)}</span>
            <span class="muted"><span class="ref">${p.ref}</span> <code class="sha">${shortSha(p.sha)}</code> · ${timeTag(p.updated_at)}</span></li>`,
        )}</ul>`
      : html`<p class="empty">No pipeline has been reported.</p>`;
    renderPage(
      ctx,
      { title: `Pipelines · ${repo.full_name}`, crumbs: crumbs(repo, 'Pipelines', false) },
      html`${repoHeader(repo, repo.access.admin, 'code')}<section class="card"><h2>Pipelines</h2>${list}
      ${olderLink(`${base}/pipelines`, 'all', pipelines.at(-1)?.id, pipelines.length === PAGE_SIZE)}</section>`,
    );
  });

  router.get('/:org/:repo/pipelines/:id', async (ctx) => {
    const repo = await readerFor(ctx, services).repo(ctx.params.org, ctx.params.repo);
    const id = numberParam(ctx.params.id, 'pipeline');
    const pipeline = await findPipeline(db, repo.repository, id);
    if (!pipeline) throw new PageError(404, 'Not found', `There is no pipeline #${id} in ${repo.full_name}.`);
    const base = `/${repo.org}/${repo.name}`;
    renderPage(
      ctx,
      { title: `${pipeline.name} #${id} · ${repo.full_name}`, crumbs: crumbs(repo, `#${id}`) },
      html`${repoHeader(repo, repo.access.admin, 'code')}
      <section class="card"><h2>${pipeline.name} <span class="muted">#${id}</span> ${statusBadge(pipeline)}</h2>
      <dl class="facts"><div><dt>Ref</dt><dd><span class="ref">${pipeline.ref}</span></dd></div>
      <div><dt>Commit</dt><dd><a href="${base}/commit/${pipeline.sha}"><code class="sha">${pipeline.sha}</code></a></dd></div>
      <div><dt>Started</dt><dd>${timeTag(pipeline.created_at)}</dd></div>
      <div><dt>Last change</dt><dd>${timeTag(pipeline.updated_at)}</dd></div></dl></section>`,
    );
  });
}
