import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../services.ts';
import type { User } from '../../domain/accounts.ts';
import { orgsFor } from '../../domain/accounts.ts';
import { ownedOrg } from '../../domain/access.ts';
import { cancelImportJob, createImportJob, findImportJob, type ImportJob as JobRow } from '../../import/jobs.ts';
import { retriedAs, retryImportJob } from '../../import/retry.ts';
import { NEW_IMPORT } from '../../import/input.ts';
import { WharfError } from '../../errors/wharfError.ts';
import { postedForm, redirectWithFlash } from '../context.ts';
import { PageError } from '../errors.ts';
import { html } from '../html.ts';
import { csrfField, renderPage } from '../layout.ts';
import { importForm, importRequest, importValuesFromForm, type ImportBody, type ImportValues } from '../pages/importForm.ts';
import type { FieldErrors } from '../pages/webhookForm.ts';
import { timeTag } from '../format.ts';
import { isFinished, jobPanel, statusFeed } from '../pages/importJob.ts';
import { refusedPage, requireUser } from '../user.ts';

/** The bounds the REST API's schema puts on an import request's fields. */
const LIMITS: Record<string, number> = Object.fromEntries(
  (['source_url', 'auth_username', 'auth_password', 'lfs_url', 'mirror_interval'] as const).map((field) => [field, NEW_IMPORT.properties[field].maxLength]),
);

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
  return (await orgsFor(services.db, user)).map((o) => o.name);
}

/** Starts an import as the API does (an owner of the target organization; the request's own checks), or the form's errors. */
async function startImport(services: Services, user: User, values: ImportValues, body: ImportBody): Promise<{ job?: JobRow; errors?: FieldErrors }> {
  const tooLong = Object.entries(LIMITS).filter(([field, max]) => (body[field] ?? '').length > max);
  if (tooLong.length)
    return {
      errors: importErrors(
        tooLong.map(([field, max]) => ({ path: `/${field}`, message: `must be at most ${max} characters` })),
        values,
        'Validation failed',
      ),
    };
  const owned = await ownedOrg(services.db, body.target_org, user);
  if (owned.refused === 'not_found') return { errors: { org: ['Organization not found'] } };
  if (owned.refused) return { errors: { _: ['Only organization owners may import repositories'] } };
  try {
    const job = await createImportJob(services, owned.org, user, body as ImportBody & { source_url: string; name: string });
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

/** Import: the form, the job's page (progress, refreshing until the end; then the result, or why it failed and a retry), a status feed for the page's script, retry and cancel. */
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
    const job = await jobOf(services, requireUser(ctx), ctx.params.id);
    const running = !isFinished(job);
    const target = `${job.target_org}/${job.name}`;
    renderPage(
      ctx,
      // Without a script the page refreshes itself; with one, wharf.js polls the status feed and swaps in the result at the end.
      {
        title: `Import of ${target}`,
        crumbs: [
          { label: job.target_org, href: `/${job.target_org}` },
          { label: 'Imports', href: `/-/orgs/${job.target_org}/imports` },
          { label: `#${job.id} ${job.name}` },
        ],
        head: running ? html`<noscript><meta http-equiv="refresh" content="2"></noscript>` : undefined,
      },
      html`<section class="card narrow" ${running ? html`data-poll="/-/import/${job.id}/status"` : ''}>
      <h1 data-swap="title">${running ? 'Importing into' : 'Import into'} ${target}</h1>
      <p class="muted" data-swap="meta">From <code class="url">${job.source_url}</code> · ${job.visibility} · started ${timeTag(job.started_at ?? job.created_at)}${job.finished_at ? html` · ended ${timeTag(job.finished_at)}` : ''}${job.retry_of ? html` · retry of <a href="/-/import/${job.retry_of}">import #${job.retry_of}</a>` : ''}</p>
      ${jobPanel(ctx, job, job.status === 'failed' ? await retriedAs(services.db, job.id) : null)}
      ${running ? html`<form method="post" action="/-/import/${job.id}/cancel" class="actions" data-swap="cancel">${csrfField(ctx)}<button type="submit" class="danger">Cancel import</button></form>` : ''}
      </section>`,
    );
  });

  router.get('/-/import/:id/status', async (ctx) => {
    const job = await jobOf(services, requireUser(ctx), ctx.params.id);
    ctx.type = 'application/json';
    ctx.body = statusFeed(job);
  });

  router.post('/-/import/:id/retry', async (ctx) => {
    const user = requireUser(ctx);
    const job = await jobOf(services, user, ctx.params.id);
    try {
      const retry = await retryImportJob(services, job, user);
      ctx.status = 303;
      ctx.redirect(`/-/import/${retry.id}`);
    } catch (err) {
      // Refused (the name is taken now, the host policy changed, retried already): say why on the failed job's page.
      if (!(err instanceof WharfError) || (err.code !== 'conflict' && err.code !== 'validation_failed')) throw err;
      const why = err.code === 'validation_failed' ? (err.details[0]?.message ?? err.message) : err.message;
      redirectWithFlash(ctx, `/-/import/${job.id}`, `Could not retry: ${why}`, 'error');
    }
  });

  router.post('/-/import/:id/cancel', async (ctx) => {
    const job = await jobOf(services, requireUser(ctx), ctx.params.id);
    const id = job.id;
    // It ended while the page was open: show how.
    if (!(await cancelImportJob(services, job))) return redirectWithFlash(ctx, `/-/import/${id}`, 'The import had already finished.', 'error');
    redirectWithFlash(ctx, `/-/import/${id}`, 'Import canceled.');
  });
}
