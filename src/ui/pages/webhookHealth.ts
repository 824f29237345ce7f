import type { Context } from 'koa';
import { html, type SafeHtml } from '../html.ts';
import { csrfField } from '../layout.ts';
import { plural, timeTag } from '../format.ts';
import type { WebhookHealth } from '../../webhooks/model.ts';

/** What a page needs of a webhook's health (SPEC §5.5). */
export interface HealthView {
  health: WebhookHealth;
  /** Deliveries held while it is paused or disabled. */
  held: number;
}

/** The state's word, for lists: nothing when healthy. */
export function healthBadge(h: HealthView): SafeHtml | '' {
  if (h.health.state === 'healthy') return '';
  const word = h.health.state === 'paused' ? 'Paused' : 'Disabled';
  return html`<span class="result bad">${word}</span><div class="muted">${h.health.reason ?? ''}${h.held ? html` · ${plural(h.held, 'delivery', 'deliveries')} held` : ''}</div>`;
}

/**
 * The banner at the top of a paused or disabled webhook's page: since when, why, how many
 * deliveries are held, the next probe, and a Resume button that posts to `resumeUrl`.
 */
export function healthBanner(ctx: Context, h: HealthView, resumeUrl: string): SafeHtml | '' {
  const { state, since, reason, nextProbeAt } = h.health;
  if (state === 'healthy') return '';
  const held = h.held ? html`${plural(h.held, 'delivery is', 'deliveries are')} held: not sent, no attempt spent.` : html`No delivery is held.`;
  const what =
    state === 'paused'
      ? html`<strong>Paused</strong> since ${timeTag(since)}: its recent attempts all failed (last: ${reason ?? 'failed'}). ${held}
          ${nextProbeAt ? html`The next probe (one held delivery) goes ${timeTag(nextProbeAt)}; the first success resumes it by itself.` : ''}`
      : html`<strong>Disabled</strong> since ${timeTag(since)}: ${reason ?? 'deactivated'}. ${held} New events are held too; nothing is sent until it is resumed.`;
  const after = h.held ? 'Resume sends the held deliveries now, in the order they were created.' : 'Resume sends the next deliveries as they come.';
  return html`<div class="flash error health" role="status" id="health"><p>${what}</p>
    <form method="post" action="${resumeUrl}" class="inline">${csrfField(ctx)}<button type="submit" class="primary">Resume</button></form>
    <span class="muted">${after}</span></div>`;
}
