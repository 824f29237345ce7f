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

/** The badge beside a webhook's URL: Paused or Disabled while its health says so (SPEC §5.5), else Active or Inactive as its owner set it. */
export function hookStateBadge(hook: { active: boolean; health: WebhookHealth }): SafeHtml {
  if (hook.health.state === 'paused') return html`<span class="result bad">Paused</span>`;
  if (hook.health.state === 'disabled') return html`<span class="result bad">Disabled</span>`;
  return hook.active ? html`<span class="result ok">Active</span>` : html`<span class="result wait">Inactive</span>`;
}

/**
 * The banner at the top of a paused or disabled webhook's page: since when, why, how many
 * deliveries are held, the next probe, and a Resume button that posts to `resumeUrl`.
 * A disabled webhook holds what comes (a 410 held the rest; new events are held too) until
 * it is resumed, and its held deliveries older than DELIVERY_RETENTION end failed with
 * "webhook disabled": the bulk redelivery of the page brings those back.
 */
export function healthBanner(ctx: Context, h: HealthView, resumeUrl: string): SafeHtml | '' {
  const { state, since, reason, nextProbeAt } = h.health;
  if (state === 'healthy') return '';
  const held = h.held ? html`${plural(h.held, 'delivery is', 'deliveries are')} held: not sent, no attempt spent.` : html`No delivery is held.`;
  const them = h.held === 1 ? 'the held delivery' : 'the held deliveries';
  const what =
    state === 'paused'
      ? html`<strong>Paused</strong> since ${timeTag(since)}: its recent attempts all failed (last: ${reason ?? 'failed'}). ${held}
          ${nextProbeAt ? html`The next probe (one held delivery) goes ${timeTag(nextProbeAt)}; the first success resumes it by itself.` : ''}`
      : html`<strong>Disabled</strong> since ${timeTag(since)}: ${reason ?? 'deactivated'}. Nothing is sent, and no probe tries the receiver. ${held} New events are held too; held deliveries kept past the delivery retention end failed (<code>webhook disabled</code>).`;
  const after =
    state === 'paused'
      ? h.held
        ? `Resume sends ${them} now, in the order they were created.`
        : 'Resume sends the next deliveries as they come.'
      : h.held
        ? html`Resume makes it active again and sends ${them} now, in the order they were created.`
        : html`Resume makes it active again: new events are sent as they happen. Deliveries that ended failed meanwhile come back with <a href="#redeliver-failed">Redeliver failed deliveries</a>.`;
  return html`<div class="flash error health" role="status" id="health"><p>${what}</p>
    <form method="post" action="${resumeUrl}" class="inline">${csrfField(ctx)}<button type="submit" class="primary">Resume</button></form>
    <span class="muted">${after}</span></div>`;
}
