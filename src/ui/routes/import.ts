import type Router from '@koa/router';
import type { Context } from 'koa';
import { notifyDeliveries, type Services } from '../../services.ts';
import type { User } from '../../domain/accounts.ts';
import { orgsOf } from '../../domain/accounts.ts';
import { ownedOrg } from '../../domain/access.ts';
import { cancelImportJob, createImportJob, findImportJob, type ImportJob as JobRow } from '../../import/jobs.ts';
import { NEW_IMPORT } from '../../import/input.ts';
import { WharfError } from '../../errors/wharfError.ts';
import type { ImportResult } from '../../import/finalize.ts';
import { postedForm, redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { importForm, importRequest, importValuesFromForm, type ImportBody, type ImportValues } from '../pages/importForm.ts';
import type { FieldErrors } from '../pages/webhookForm.ts';
import { plural, timeTag } from '../format.ts';
import { refusedPage, requireUser } from '../user.ts';

/** An import job (SPEC §8.1) as the pages show it: never its credentials. */
interface ImportJob {
  id: number;
  status: string;
  progress: { phase: string; percent: number | null; objects_received: number | null; bytes_received: number | null };
  error: string | null;
  source_url: string;
  target_org: string;
  name: string;
  visibility: string;
  repository: (Omit<ImportResult, 'missing_lfs_objects'> & { full_name: string; missing_lfs_objects?: ImportResult['missing_lfs_objects'] }) | null;
  created_at: number;
  finished_at: number | null;
}

/** The view of a job, built field by field so stored credentials and lease bookkeeping never reach a page. */
function jobView(job: JobRow): ImportJob {
  const result: ImportResult | null = job.status === 'succeeded' && job.result ? JSON.parse(job.result) : null;
  return {
    id: job.id,
    status: job.status,
    progress: { phase: job.phase ?? job.status, percent: job.percent, objects_received: job.objects_received, bytes_received: job.bytes_received },
    error: job.error,
    source_url: job.source_url,
    target_org: job.target_org,
    name: job.name,
    visibility: job.visibility,
    repository: result ? { ...result, full_name: `${job.target_org}/${job.name}` } : null,
    created_at: job.created_at,
    finished_at: job.finished_at,
  };
}

/** The bounds the REST API's schema puts on an import request's fields. */
const LIMITS: Record<string, number> = Object.fromEntries(
  (['source_url', 'auth_username', 'auth_password', 'lfs_url', 'mirror_interval'] as const).map((field) => [field, NEW_IMPORT.properties[field].maxLength]),
);

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

/** The job of the path, for an owner of its organization (the API's rule): 404 for anyone not in it, 403 for a member. */
async function jobOf(services: Services, user: User, value: string | undefined): Promise<JobRow> {
  const job = await findImportJob(services.db, jobId(value));
  const owned = job && (await ownedOrg(services.db, job.target_org, user));
  if (!job || !owned) throw new PageError(404, 'Not found', 'Import not found');
  if (owned.refused) throw refusedPage(owned.refused, 'Import not found', 'Only organization owners may import repositories');
  return job;
}

/** Sorts the 422 details under the form's fields; the source URL belongs to whichever source was chosen. */
function importErrors(details: { path: string; message: string }[], values: ImportValues, fallback: string): FieldErrors {
  const hosted = values.source !== 'git';
  const fields: Record<string, string> = {
    source_url: hosted ? 'path' : 'url',
    auth_username: hosted ? 'token' : 'username',
    auth_password: hosted ? 'token' : 'password',
    target_org: 'org',
    name: 'name',
    visibility: 'visibility',
    lfs_url: 'lfsUrl',
    mirror_interval: 'mirrorInterval',
  };
  const errors: FieldErrors = {};
  for (const d of details) (errors[fields[d.path.split('/')[1] ?? ''] ?? '_'] ??= []).push(d.message);
  if (Object.keys(errors).length === 0) errors._ = [fallback];
  return errors;
}

async function orgNames(services: Services, user: User): Promise<string[]> {
  return (await orgsOf(services.db, user.id)).map((o) => o.name);
}

/** Starts an import as the API does (an owner of the target organization; the request's own checks), or the form's errors. */
async function startImport(services: Services, user: User, values: ImportValues, body: ImportBody): Promise<{ job?: JobRow; errors?: FieldErrors }> {
  const tooLong = Object.entries(LIMITS).filter(([field, max]) => (body[field] ?? '').length > max);
  if (tooLong.length)
    return {
      errors: importErrors(
        tooLong.map(([field, max]) => ({ path: `/${field}`, message: `must NOT have more than ${max} characters` })),
        values,
        'Validation failed',
      ),
    };
  const owned = await ownedOrg(services.db, body.target_org, user);
  if (owned.refused === 'not_found') return { errors: { org: ['Organization not found'] } };
  if (owned.refused) return { errors: { _: ['Only organization owners may import repositories'] } };
  try {
    const job = await createImportJob(services.db, services.config, owned.org, user, body as ImportBody & { source_url: string; name: string });
    services.signals.emit('imports');
    return { job };
  } catch (err) {
    if (!(err instanceof WharfError) || (err.code !== 'conflict' && err.code !== 'validation_failed')) throw err;
    return { errors: err.code === 'conflict' ? { name: [err.message] } : importErrors(err.details, values, err.message) };
  }
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
  if (job.status === 'failed')
    return html`<p class="result bad">Import failed</p><p class="flash error" role="alert">${job.error ?? 'The import failed.'}</p><p><a class="button" href="/-/import">Start again</a></p>`;
  if (job.status === 'canceled') return html`<p class="result wait">Import canceled</p><p><a class="button" href="/-/import">Start again</a></p>`;
  return html`<p aria-live="polite"><span class="result wait" data-field="status">${runningLabel(job)}</span></p>
  <progress max="100" value="${percent}" data-field="percent" aria-label="Import progress">${percent}%</progress>${numbers}`;
}

/** Import: the form, the job's progress page (refreshing until the end), a status feed for the page's script, and cancel. */
export function importRoutes(router: Router, services: Services) {
  router.get('/-/import', async (ctx) => {
    const orgs = await orgNames(services, requireUser(ctx));
    const org = typeof ctx.query.org === 'string' ? ctx.query.org : (orgs[0] ?? '');
    formPage(
      ctx,
      {
        source: 'git',
        url: '',
        path: '',
        username: '',
        password: '',
        token: '',
        org,
        name: '',
        visibility: 'private',
        lfsUrl: '',
        mirror: false,
        mirrorInterval: '',
      },
      orgs,
      {},
    );
  });

  router.post('/-/import', async (ctx) => {
    const user = requireUser(ctx);
    const values = importValuesFromForm(postedForm(ctx));
    const { body, errors } = importRequest(values);
    if (!body) return formPage(ctx, values, await orgNames(services, user), errors!);
    const { job, errors: refused } = await startImport(services, user, values, body);
    if (!job) return formPage(ctx, values, await orgNames(services, user), refused!);
    ctx.status = 303;
    ctx.redirect(`/-/import/${job.id}`);
  });

  router.get('/-/import/:id', async (ctx) => {
    const job = jobView(await jobOf(services, requireUser(ctx), ctx.params.id));
    const running = !FINISHED.includes(job.status);
    renderPage(
      ctx,
      // Without a script the page refreshes itself; with one, wharf.js polls the status feed and reloads at the end.
      {
        title: `Import of ${job.target_org}/${job.name}`,
        crumbs: [{ label: 'Import', href: '/-/import' }, { label: `${job.target_org}/${job.name}` }],
        head: running ? html`<noscript><meta http-equiv="refresh" content="2"></noscript>` : undefined,
      },
      html`<section class="card narrow" ${running ? html`data-poll="/-/import/${job.id}/status"` : ''}>
      <h1>${running ? 'Importing into' : 'Import into'} ${job.target_org}/${job.name}</h1>
      <p class="muted">From <code>${job.source_url}</code> · ${job.visibility} · started ${timeTag(job.created_at)}${job.finished_at ? html` · ended ${timeTag(job.finished_at)}` : ''}</p>
      <div class="progress-view">${progressView(job)}</div>
      ${running ? html`<form method="post" action="/-/import/${job.id}/cancel" class="actions">${csrfField(ctx)}<button type="submit" class="danger">Cancel import</button></form>` : ''}
      </section>`,
    );
  });

  router.get('/-/import/:id/status', async (ctx) => {
    const job = jobView(await jobOf(services, requireUser(ctx), ctx.params.id));
    ctx.type = 'application/json';
    ctx.body = { status: job.status, label: runningLabel(job), finished: FINISHED.includes(job.status), progress: job.progress ?? {} };
  });

  router.post('/-/import/:id/cancel', async (ctx) => {
    const job = await jobOf(services, requireUser(ctx), ctx.params.id);
    const id = job.id;
    // It ended while the page was open: show how.
    if (!(await cancelImportJob(services.db, services.config, job)))
      return redirectWithFlash(ctx, `/-/import/${id}`, 'The import had already finished.', 'error');
    services.signals.emit('import-cancel', id);
    notifyDeliveries(services);
    redirectWithFlash(ctx, `/-/import/${id}`, 'Import canceled.');
  });
}
