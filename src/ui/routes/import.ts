import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import { ApiError, seg, type ApiClient, type ApiErrorDetail } from '../apiClient.ts';
import { redirectWithFlash } from '../context.ts';
import { PageError, requireApi } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { importForm, importRequest, importValuesFromForm, type ImportValues } from '../pages/importForm.ts';
import type { FieldErrors } from '../pages/webhookForm.ts';
import { plural, timeTag } from '../format.ts';

/** An import job (SPEC §8.1). */
interface ImportJob {
  id: number;
  status: string;
  progress: { phase?: string; percent?: number; objects_received?: number; bytes_received?: number } | null;
  error: string | null;
  source_url: string;
  target_org: string;
  name: string;
  visibility: string;
  repository: {
    full_name: string;
    default_branch: string;
    branches: number;
    tags: number;
    lfs_objects: number;
    missing_lfs_objects?: { oid: string; size: number; error: string }[];
  } | null;
  created_at: string;
  finished_at: string | null;
}

const FINISHED = ['succeeded', 'failed', 'canceled'];
const LABELS: Record<string, string> = { queued: 'Waiting to start', cloning: 'Cloning', fetching_lfs: 'Fetching LFS objects', finalizing: 'Finalizing' };

/** What a running job is doing, in words: its status, and its phase when that says more. */
function runningLabel(job: ImportJob): string {
  const status = LABELS[job.status] ?? job.status;
  const phase = job.progress?.phase;
  return phase && phase !== job.status && LABELS[phase] !== status ? `${status} · ${phase}` : status;
}

function jobId(value: string | undefined): number {
  if (!value || !/^[1-9]\d{0,15}$/.test(value)) throw new PageError(404, 'Not found', 'No such import.');
  return Number(value);
}

/** Sorts the API's 422 details under the form's fields; the source URL belongs to whichever source was chosen. */
function importErrors(details: ApiErrorDetail[], values: ImportValues, fallback: string): FieldErrors {
  const hosted = values.source !== 'git';
  const fields: Record<string, string> = {
    source_url: hosted ? 'path' : 'url',
    auth_username: hosted ? 'token' : 'username',
    auth_password: hosted ? 'token' : 'password',
    target_org: 'org',
    name: 'name',
    visibility: 'visibility',
    lfs_url: 'lfsUrl',
  };
  const errors: FieldErrors = {};
  for (const d of details) (errors[fields[d.path.split('/')[1] ?? ''] ?? '_'] ??= []).push(d.message);
  if (Object.keys(errors).length === 0) errors._ = [fallback];
  return errors;
}

async function orgsOf(api: ApiClient): Promise<string[]> {
  const me = await api.get('/api/v1/user');
  return me.orgs.map((o: { name: string }) => o.name);
}

function formPage(ctx: Context, values: ImportValues, orgs: string[], errors: FieldErrors) {
  renderPage(
    ctx,
    { title: 'Import a repository', crumbs: [{ label: 'Import' }], status: Object.keys(errors).length ? 422 : 200 },
    html`<section class="card narrow"><h1>Import a repository</h1><p class="muted">Brings every branch and tag, LFS objects and submodule references. Issues, pull requests and settings stay behind.</p>
    ${importForm(ctx, values, orgs, errors)}</section>`,
  );
}

function progressView(job: ImportJob) {
  const p = job.progress ?? {};
  const percent = Math.max(0, Math.min(100, Math.round(p.percent ?? 0)));
  const numbers = html`<p class="muted" data-field="numbers">${p.objects_received ?? 0} objects · ${Math.round((p.bytes_received ?? 0) / 1024)} KiB received</p>`;
  if (job.status === 'succeeded' && job.repository) {
    const r = job.repository;
    const missing = r.missing_lfs_objects ?? [];
    const missingList = missing.length
      ? html`<div class="flash error" role="alert" data-field="missing"><p>${plural(missing.length, 'LFS object')} missing at the source:</p>
        <ul>${missing.map((m) => html`<li><code>${m.oid}</code> (${m.size} bytes): ${m.error}</li>`)}</ul></div>`
      : '';
    return html`<p class="result ok">Import finished</p><p><a class="button primary" href="/${r.full_name}">Open ${r.full_name}</a></p>
    <p class="muted">${plural(r.branches, 'branch', 'branches')} · ${plural(r.tags, 'tag')} · ${plural(r.lfs_objects, 'LFS object')} · default branch <span class="ref">${r.default_branch}</span></p>${missingList}`;
  }
  if (job.status === 'failed') return html`<p class="result bad">Import failed</p><p class="flash error" role="alert">${job.error ?? 'The import failed.'}</p><p><a class="button" href="/-/import">Start again</a></p>`;
  if (job.status === 'canceled') return html`<p class="result wait">Import canceled</p><p><a class="button" href="/-/import">Start again</a></p>`;
  return html`<p><span class="result wait" data-field="status">${runningLabel(job)}</span></p>
  <progress max="100" value="${percent}" data-field="percent">${percent}%</progress>${numbers}`;
}

/** Import: the form, the job's progress page (refreshing until the end), a status feed for the page's script, and cancel. */
export function importRoutes(router: Router, _services: Services) {
  router.get('/-/import', async (ctx) => {
    const api = requireApi(ctx);
    const orgs = await orgsOf(api);
    const org = typeof ctx.query.org === 'string' ? ctx.query.org : (orgs[0] ?? '');
    formPage(ctx, { source: 'git', url: '', path: '', username: '', password: '', token: '', org, name: '', visibility: 'private', lfsUrl: '' }, orgs, {});
  });

  router.post('/-/import', async (ctx) => {
    const api = requireApi(ctx);
    const values = importValuesFromForm(ctx.state.form);
    const { body, errors } = importRequest(values);
    if (!body) return formPage(ctx, values, await orgsOf(api), errors!);
    let job: ImportJob;
    try {
      job = await api.post('/api/v1/repos/import', body);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500 || err.status === 401) throw err;
      // An unknown route answers the bare 'Not found'; a missing organization names itself.
      if (err.status === 404 && err.message === 'Not found') {
        throw new PageError(404, 'Import unavailable', 'This server does not offer repository import.');
      }
      const errs = err.status === 409 ? { name: [err.message] } : err.status === 404 ? { org: [err.message] } : importErrors(err.details, values, err.message);
      return formPage(ctx, values, await orgsOf(api), errs);
    }
    ctx.status = 303;
    ctx.redirect(`/-/import/${job.id}`);
  });

  router.get('/-/import/:id', async (ctx) => {
    const api = requireApi(ctx);
    const job: ImportJob = await api.get(`/api/v1/repos/import/${jobId(ctx.params.id)}`);
    const running = !FINISHED.includes(job.status);
    renderPage(
      ctx,
      // Without a script the page refreshes itself; with one, wharf.js polls the status feed and reloads at the end.
      { title: `Import of ${job.target_org}/${job.name}`, crumbs: [{ label: 'Import', href: '/-/import' }, { label: `${job.target_org}/${job.name}` }], head: running ? html`<noscript><meta http-equiv="refresh" content="2"></noscript>` : undefined },
      html`<section class="card narrow" ${running ? html`data-poll="/-/import/${job.id}/status"` : ''}>
      <h1>${running ? 'Importing into' : 'Import into'} ${job.target_org}/${job.name}</h1>
      <p class="muted">From <code>${job.source_url}</code> · ${job.visibility} · started ${timeTag(job.created_at)}${job.finished_at ? html` · ended ${timeTag(job.finished_at)}` : ''}</p>
      <div class="progress-view">${progressView(job)}</div>
      ${running ? html`<form method="post" action="/-/import/${job.id}/cancel" class="actions">${csrfField(ctx)}<button type="submit" class="danger">Cancel import</button></form>` : ''}
      </section>`,
    );
  });

  router.get('/-/import/:id/status', async (ctx) => {
    const api = requireApi(ctx);
    const job: ImportJob = await api.get(`/api/v1/repos/import/${jobId(ctx.params.id)}`);
    ctx.type = 'application/json';
    ctx.body = { status: job.status, label: runningLabel(job), finished: FINISHED.includes(job.status), progress: job.progress ?? {} };
  });

  router.post('/-/import/:id/cancel', async (ctx) => {
    const api = requireApi(ctx);
    const id = jobId(ctx.params.id);
    try {
      await api.delete(`/api/v1/repos/import/${seg(id)}`);
    } catch (err) {
      // It ended while the page was open: show how.
      if (err instanceof ApiError && err.status === 409) return redirectWithFlash(ctx, `/-/import/${id}`, 'The import had already finished.', 'error');
      throw err;
    }
    redirectWithFlash(ctx, `/-/import/${id}`, 'Import canceled.');
  });
}
