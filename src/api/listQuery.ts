import type { Context } from 'koa';
import { validationFailed, type ErrorDetail } from '../http/errors.ts';
import { MAX_INT } from './fields.ts';

/** Query of an issue or pull request list: `state` (open, closed, all), `limit` (1–100), `cursor` (a number from the previous page's Link). */
export interface ListQuery {
  state: 'open' | 'closed' | 'all';
  limit: number;
  before?: number;
}

/** Reads ?state, ?limit and ?cursor; bad values are a 422 naming each (SPEC §4). */
export function parseListQuery(ctx: Context): ListQuery {
  const details: ErrorDetail[] = [];
  const one = (name: string) => {
    const v = ctx.query[name];
    return Array.isArray(v) ? v[v.length - 1] : v;
  };
  const state = one('state') ?? 'open';
  if (!['open', 'closed', 'all'].includes(state)) details.push({ path: '/state', message: 'must be open, closed or all' });
  const limitText = one('limit') ?? '30';
  const limit = /^\d{1,3}$/.test(limitText) ? Number(limitText) : NaN;
  if (!(limit >= 1 && limit <= 100)) details.push({ path: '/limit', message: 'must be a whole number from 1 to 100' });
  const cursor = one('cursor');
  if (cursor !== undefined && !(/^[1-9]\d{0,9}$/.test(cursor) && Number(cursor) <= MAX_INT)) details.push({ path: '/cursor', message: 'is not a cursor this server gave' });
  if (details.length > 0) throw validationFailed(details);
  return { state: state as ListQuery['state'], limit, before: cursor === undefined ? undefined : Number(cursor) };
}

/** Sets a `Link: <…?cursor=N>; rel="next"` header when a page came back full. */
export function setNextLink(ctx: Context, query: ListQuery, numbers: number[]): void {
  if (numbers.length < query.limit) return;
  const next = new URLSearchParams({ state: query.state, limit: String(query.limit), cursor: String(numbers[numbers.length - 1]) });
  ctx.set('Link', `<${ctx.path}?${next}>; rel="next"`);
}
