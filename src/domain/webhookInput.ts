import type { Config } from '../config.ts';
import { checkTarget, MAX_URL_LENGTH } from '../webhooks/target.ts';
import { validBranchFilter } from '../webhooks/match.ts';
import { WEBHOOK_EVENTS } from '../webhooks/model.ts';
import type { WebhookInput } from '../webhooks/store.ts';

/** One problem with a webhook's fields: a JSON Pointer to the field and what is wrong. */
export interface InputProblem {
  path: string;
  message: string;
}

/** The bounds of a webhook's fields, as the REST API's schema states them. */
export const WEBHOOK_LIMITS = { secret: 1024, branchFilter: 255 } as const;

/**
 * Checks a webhook's fields beyond their types (the URL's target and the host policy, the
 * branch glob, lengths, known events) and normalizes them (URL, content type, events);
 * every problem is named, or the input is returned ready for the store.
 */
export async function checkWebhookInput(
  config: Config,
  input: Omit<WebhookInput, 'content_type'> & { content_type?: string },
): Promise<{ input: WebhookInput; problems?: undefined } | { problems: InputProblem[] }> {
  const problems: InputProblem[] = [];
  let url = input.url;
  if (url !== undefined) {
    if (url.length === 0) problems.push({ path: '/url', message: 'must NOT have fewer than 1 characters' });
    else if (url.length > MAX_URL_LENGTH) problems.push({ path: '/url', message: `must NOT have more than ${MAX_URL_LENGTH} characters` });
    else {
      const target = await checkTarget(config.webhookAllowedHosts, url);
      if (target.problem) problems.push({ path: '/url', message: target.problem });
      url = target.url;
    }
  }
  if (input.secret !== undefined && (input.secret.length === 0 || input.secret.length > WEBHOOK_LIMITS.secret)) {
    problems.push({ path: '/secret', message: `must be 1 to ${WEBHOOK_LIMITS.secret} characters` });
  }
  if (input.events !== undefined && (input.events.length === 0 || input.events.some((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e)))) {
    problems.push({ path: '/events', message: 'must be known event types, at least one' });
  }
  let branchFilter = input.branch_filter;
  if (branchFilter === '') branchFilter = null;
  if (typeof branchFilter === 'string' && branchFilter.length > WEBHOOK_LIMITS.branchFilter)
    problems.push({ path: '/branch_filter', message: `must NOT have more than ${WEBHOOK_LIMITS.branchFilter} characters` });
  else if (typeof branchFilter === 'string' && !validBranchFilter(branchFilter)) problems.push({ path: '/branch_filter', message: 'is not a valid glob' });
  if (problems.length > 0) return { problems };
  const events = input.events && (input.events.includes('*') ? ['*'] : [...new Set(input.events)]);
  const contentType = input.content_type === undefined ? undefined : ('json' as const);
  return { input: { ...input, url, content_type: contentType, branch_filter: branchFilter, events } };
}
