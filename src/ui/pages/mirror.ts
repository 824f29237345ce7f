import type { Context } from 'koa';
import type { Mirror } from '../../pullMirrors/state.ts';
import { formatInterval, NEVER } from '../../pullMirrors/state.ts';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import { timeTag } from '../format.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** What the mirror is doing now: syncing, waiting for a requested sync, or idle until the next one. */
function stateLine(mirror: Mirror, now: number): SafeHtml {
  if (mirror.lockedBy !== null && (mirror.leaseExpiresAt ?? 0) >= now) return html`<span class="result wait" data-field="mirror-state">Syncing now</span>`;
  if (mirror.nextSyncAt <= now) return html`<span class="result wait" data-field="mirror-state">Sync queued</span>`;
  if (mirror.nextSyncAt >= NEVER) return html`<span class="muted" data-field="mirror-state">No sync scheduled</span>`;
  return html`<span data-field="mirror-state">Next sync ${timeTag(iso(mirror.nextSyncAt))}</span>`;
}

/** The last sync: when, its result, and its error when it failed. */
function lastSync(mirror: Mirror): SafeHtml {
  if (mirror.lastSyncAt === null) return html`<p class="muted" data-field="mirror-last">Not synced since the import.</p>`;
  const result =
    mirror.lastSyncStatus === 'failed'
      ? html`<span class="result bad">failed</span>`
      : html`<span class="result ok">${mirror.lastSyncStatus ?? 'unknown'}</span>`;
  const error =
    mirror.lastSyncStatus === 'failed' && mirror.lastError ? html`<p class="flash error" role="status" data-field="mirror-error">${mirror.lastError}</p>` : '';
  return html`<p data-field="mirror-last">Last sync ${timeTag(iso(mirror.lastSyncAt))}: ${result}</p>${error}`;
}

/**
 * The mirror card of a repository page (SPEC §8.1.1): its source, the last sync and the
 * next; for the repository's admins, Sync now and Stop mirroring (which asks first).
 */
export function mirrorCard(ctx: Context, base: string, mirror: Mirror, admin: boolean, now = Date.now()): SafeHtml {
  const actions = admin
    ? html`<div class="actions"><form method="post" action="${base}/mirror/sync">${csrfField(ctx)}<button type="submit">Sync now</button></form>
      <a class="button danger" href="${base}/mirror/stop">Stop mirroring…</a></div>`
    : '';
  return html`<section class="card mirror" aria-labelledby="mirror-heading"><h2 id="mirror-heading">Mirror</h2>
  <p>Mirrored from <strong class="url" data-field="mirror-source">${mirror.sourceUrl}</strong>, every ${formatInterval(mirror.intervalMs)}. Pushes here are refused until the mirroring stops.</p>
  ${lastSync(mirror)}<p>${stateLine(mirror, now)}</p>${actions}</section>`;
}

/** The confirmation page's body for stopping a mirror: the cutover cannot be undone. */
export function stopMirroringForm(ctx: Context, base: string, mirror: Mirror): SafeHtml {
  return html`<section class="card narrow danger-zone"><h1>Stop mirroring?</h1>
  <p>This repository stops following <strong class="url">${mirror.sourceUrl}</strong>: no more syncs, and it takes pushes from then on. Do this once the team has switched over. It cannot be undone (importing again starts a new mirror).</p>
  <form method="post" action="${base}/mirror/stop" class="actions">${csrfField(ctx)}<button type="submit" class="danger">Yes, stop mirroring</button><a class="button" href="${base}">Cancel</a></form></section>`;
}
