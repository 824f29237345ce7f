import type { Context } from 'koa';
import type { ImportJob } from '../../import/jobs.ts';
import type { ImportResult } from '../../import/finalize.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import { plural, timeTag } from '../format.ts';
import { importWarnings } from '../../import/warnings.ts';

/** Phases (and statuses standing in for one) in words. */
const PHASES: Record<string, string> = {
  queued: 'Waiting to start',
  cloning: 'Cloning',
  connecting: 'Connecting to the source',
  counting_objects: 'Counting objects',
  compressing_objects: 'Compressing objects',
  receiving_objects: 'Receiving objects',
  resolving_deltas: 'Resolving deltas',
  checking_connectivity: 'Checking connectivity',
  checking_submodules: 'Checking submodules',
  fetching_lfs: 'Fetching LFS objects',
  finalizing: 'Finalizing',
  retrying: 'The connection broke off; trying again',
  done: 'Done',
};

const FINISHED = new Set(['succeeded', 'failed', 'canceled']);

/** Whether a job has ended. */
export function isFinished(job: Pick<ImportJob, 'status'>): boolean {
  return FINISHED.has(job.status);
}

/** What a running job is doing, in words. */
export function phaseLabel(job: Pick<ImportJob, 'status' | 'phase'>): string {
  return PHASES[job.phase ?? job.status] ?? PHASES[job.status] ?? job.status;
}

const count = (n: number) => n.toLocaleString('en-US');

/** "512 bytes", "3.2 MiB". */
export function formatBytes(n: number): string {
  if (n < 1024) return plural(n, 'byte');
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** "0.4 s", "12 s", "3 min 5 s", "2 h 5 min". */
export function formatDuration(ms: number): string {
  if (ms < 10_000) return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
}

/** The figures of a running job in one line: percent, objects, bytes, rate (each when known). */
export function progressDetails(job: ImportJob): string {
  const parts: string[] = [];
  if (job.percent !== null) parts.push(`${job.percent}%`);
  if (job.objects_received !== null)
    parts.push(job.objects_total ? `${count(job.objects_received)} of ${count(job.objects_total)} objects` : plural(job.objects_received, 'object'));
  if (job.bytes_received !== null) parts.push(`${formatBytes(job.bytes_received)} received`);
  if (job.bytes_per_second && job.phase === 'receiving_objects') parts.push(`${formatBytes(job.bytes_per_second)}/s`);
  return parts.join(' · ');
}

/** How long a job ran, when it has ended. */
function duration(job: ImportJob): number | null {
  return job.started_at !== null && job.finished_at !== null ? Math.max(0, job.finished_at - job.started_at) : null;
}

function result(job: ImportJob): ImportResult | null {
  return job.status === 'succeeded' && job.result ? JSON.parse(job.result) : null;
}

/** The LFS objects a succeeded job's source could not give (none for other jobs, and for jobs that finished before they were counted). */
function missingObjects(job: ImportJob): NonNullable<ImportResult['missing_lfs_objects']> {
  return result(job)?.missing_lfs_objects ?? [];
}

/** The words of a finished job's badge: the job page speaks of the import, the history of the job. */
const BADGE_WORDS = {
  page: { succeeded: 'Import finished', warned: 'Import finished with warnings', failed: 'Import failed', canceled: 'Import canceled' },
  history: { succeeded: 'Succeeded', warned: 'Finished with warnings', failed: 'Failed', canceled: 'Canceled' },
} as const;

/** A finished job's badge: green when all arrived, amber when it succeeded with something missing, red when it failed; nothing while it runs. */
function outcomeBadge(job: ImportJob, where: keyof typeof BADGE_WORDS): SafeHtml | '' {
  const words = BADGE_WORDS[where];
  if (job.status === 'succeeded')
    return missingObjects(job).length ? html`<span class="result wait">${words.warned}</span>` : html`<span class="result ok">${words.succeeded}</span>`;
  if (job.status === 'failed') return html`<span class="result bad">${words.failed}</span>`;
  if (job.status === 'canceled') return html`<span class="result wait">${words.canceled}</span>`;
  return '';
}

/** The reason of a failed job in one sentence (jobs that failed before reasons were kept show a general one). */
export function failureSentence(job: ImportJob): string {
  return job.error_reason ?? 'The import failed.';
}

/** What the live region adds to a finished job's state, read out when the job ends: the counts, or the reason. */
export function outcomeDetail(job: ImportJob): string {
  if (job.status === 'succeeded') {
    const r = result(job);
    const took = duration(job);
    const parts = [r?.commits !== undefined ? plural(r.commits, 'commit') : '', took !== null ? `in ${formatDuration(took)}` : ''].filter(Boolean);
    const warnings = importWarnings(r).map((w) => ` ${w.message}`);
    return `${parts.length ? `: ${parts.join(' ')}.` : '.'}${warnings.join('')}`;
  }
  if (job.status === 'failed') return `: ${failureSentence(job)}`;
  return '.';
}

/** The JSON the page's script polls while the job runs. */
export function statusFeed(job: ImportJob) {
  return {
    status: job.status,
    finished: isFinished(job),
    label: phaseLabel(job),
    percent: job.percent,
    details: progressDetails(job),
  };
}

function running(job: ImportJob): SafeHtml {
  const value = job.percent === null ? '' : html`value="${job.percent}" aria-valuenow="${job.percent}"`;
  return html`<div class="import-progress">
    <label for="import-progress">Import progress</label>
    <progress id="import-progress" max="100" ${value} data-field="percent">${job.percent ?? 0}%</progress>
    <p class="muted" data-field="details">${progressDetails(job) || 'Waiting for the first figures…'}</p>
  </div>`;
}

function succeeded(job: ImportJob): SafeHtml {
  const r = result(job);
  const fullName = `${job.target_org}/${job.name}`;
  if (!r) return html`<p><a class="button primary" href="/${fullName}">Open ${fullName}</a></p>`;
  const took = duration(job);
  const fact = (label: string, value: string, field: string) => html`<div><dt>${label}</dt><dd data-field="${field}">${value}</dd></div>`;
  const missing = r.missing_lfs_objects ?? [];
  const them = missing.length === 1 ? 'it' : 'them';
  // A warning, not a failure: the repository is here, these objects are not (the CLI exits 1 for them unless told otherwise).
  const missingList = missing.length
    ? html`<div class="flash warning" data-field="missing"><p>${plural(missing.length, 'LFS object')} missing at the source:</p>
        <ul class="missing-lfs">${missing.map((m) => html`<li><code class="oid">${m.oid}</code> (${m.size} bytes): ${m.error}</li>`)}</ul>
        <p>The repository was imported without ${them}: files that point at ${them} cannot be downloaded until ${missing.length === 1 ? 'it is' : 'they are'} pushed here (<code>git lfs push --all</code> from a clone that has ${them}).</p></div>`
    : '';
  return html`<h2>What arrived</h2>
  <dl class="import-facts">
    ${r.commits !== undefined ? fact('Commits', count(r.commits), 'commits') : ''}
    ${fact('Branches', count(r.branches), 'branches')}
    ${fact('Tags', count(r.tags), 'tags')}
    ${fact('LFS objects', count(r.lfs_objects), 'lfs')}
    ${r.size_bytes !== undefined ? fact('Size', formatBytes(r.size_bytes), 'size') : ''}
    ${took !== null ? fact('Duration', formatDuration(took), 'duration') : ''}
  </dl>
  <p class="muted">Default branch <span class="ref">${r.default_branch}</span></p>${missingList}
  <p><a class="button primary" href="/${fullName}">Open ${fullName}</a></p>`;
}

/** What a retry brings along, so the button says what it will do. */
function settings(job: ImportJob, hasCredentials: boolean): SafeHtml {
  return html`<ul class="import-settings">
    <li>Source <code>${job.source_url}</code>${hasCredentials ? ' with the credentials given before (kept sealed, never shown)' : ''}</li>
    <li>Into <strong>${job.target_org}/${job.name}</strong>, ${job.visibility}</li>
    ${job.lfs_url ? html`<li>LFS endpoint <code>${job.lfs_url}</code></li>` : ''}
    ${job.mirror_interval_ms !== null ? html`<li>Kept as a mirror, synced every ${formatDuration(job.mirror_interval_ms)}</li>` : ''}
  </ul>`;
}

function failed(ctx: Context, job: ImportJob, retriedAs: number | null): SafeHtml {
  const retry =
    retriedAs !== null
      ? html`<p>Retried as <a href="/-/import/${retriedAs}">import #${retriedAs}</a>.</p>`
      : html`<h2>Try again</h2><p>Once the source is fixed, start the import again with the same settings:</p>
    ${settings(job, job.credentials !== null)}
    <form method="post" action="/-/import/${job.id}/retry" class="actions">${csrfField(ctx)}<button type="submit" class="primary">Retry with the same settings</button>
    <a class="button" href="/-/import?org=${job.target_org}">Start a new import</a></form>`;
  return html`<h2>What went wrong</h2>
  <p class="flash error" data-field="reason">${failureSentence(job)}</p>
  ${job.error ? html`<details class="git-message"><summary>Details from the source</summary><pre data-field="error">${job.error}</pre></details>` : ''}
  ${retry}`;
}

/** The part of a job's page that follows it: progress while it runs, then its result or why it failed. */
export function jobPanel(ctx: Context, job: ImportJob, retriedAs: number | null): SafeHtml {
  const badge = outcomeBadge(job, 'page');
  const body =
    job.status === 'succeeded'
      ? succeeded(job)
      : job.status === 'failed'
        ? failed(ctx, job, retriedAs)
        : job.status === 'canceled'
          ? html`<p><a class="button" href="/-/import?org=${job.target_org}">Start a new import</a></p>`
          : running(job);
  // The live region stays in the page while the script swaps the rest: it reads out each new phase, then the result.
  const live = badge ? html`${badge}<span class="sr-only">${outcomeDetail(job)}</span>` : phaseLabel(job);
  return html`<p class="import-phase" role="status" aria-live="polite" data-field="live">${live}</p>
  <div class="progress-view" data-swap="panel">${body}</div>`;
}

/** One row of an organization's import history: never the credentials (source_url holds none). */
export function historyRow(job: ImportJob): SafeHtml {
  const took = duration(job);
  const state = outcomeBadge(job, 'history') || html`<span class="result wait">${phaseLabel(job)}</span>`;
  const missing = missingObjects(job).length;
  return html`<li class="row" data-import="${job.id}">
    <div><a class="strong" href="/-/import/${job.id}">${job.target_org}/${job.name}</a> ${state}
    <p class="muted">From <code class="url">${job.source_url}</code></p>
    <p class="muted">Started ${timeTag(job.started_at ?? job.created_at)}${took !== null ? ` · took ${formatDuration(took)}` : ''}${job.retry_of ? html` · retry of <a href="/-/import/${job.retry_of}">#${job.retry_of}</a>` : ''}
    ${job.status === 'failed' ? html` · ${failureSentence(job)}` : ''}${missing ? html` · ${plural(missing, 'LFS object')} missing at the source` : ''}</p></div>
  </li>`;
}
