import type { Context } from 'koa';
import type { FromSchema } from 'json-schema-to-ts';
import { MAX_INT } from './params.ts';

/** Query of an issue or pull request list: `state` (open, closed, all), `limit` (1–100), `cursor` (a number from the previous page's Link). */
export const LIST_QUERY = {
  type: 'object',
  properties: {
    state: { type: 'string', enum: ['open', 'closed', 'all'], default: 'open' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
    cursor: { type: 'integer', minimum: 1, maximum: MAX_INT, description: 'From the previous page\'s `Link: rel="next"`.' },
  },
} as const;

/** A checked list query. */
export type ListQuery = FromSchema<typeof LIST_QUERY>;

/** The list options the domain takes from a checked query. */
export function listOptions(query: ListQuery) {
  return { state: query.state, limit: query.limit, before: query.cursor };
}

/** Sets a `Link: <…?cursor=N>; rel="next"` header when a page came back full. */
export function setNextLink(ctx: Context, query: ListQuery, numbers: number[]): void {
  if (numbers.length < query.limit) return;
  const next = new URLSearchParams({ state: query.state, limit: String(query.limit), cursor: String(numbers[numbers.length - 1]) });
  ctx.set('Link', `<${ctx.path}?${next}>; rel="next"`);
}
