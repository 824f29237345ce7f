import type { Knex } from 'knex';
import { validationFailed } from '../errors/wharfError.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Db } from '../db/connect.ts';
import { isPostgres } from '../db/connect.ts';
import { generateSecret, sealWebhookSecret } from './secret.ts';
import { MAX_WEBHOOKS_PER_ORG, MAX_WEBHOOKS_PER_REPOSITORY, toWebhook, type Webhook } from './model.ts';
import { insertPing, isRepository, type WebhookOwner } from './ping.ts';
import { openCustomHeaders, sealCustomHeaders } from './headers.ts';
import { wake, type DomainContext } from '../services.ts';
import type { User } from '../domain/accounts.ts';
import type { WebhookInput } from './input.ts';
import { healthy, resumeWebhook } from './endpointHealth.ts';
import { insertedId } from '../db/results.ts';

/** Why a create or update was refused: a `validation_failed` naming the field (a JSON Pointer). */
const refused = (path: string, message: string) => validationFailed([{ path, message }]);

/** The webhooks of a repository, oldest first. */
export async function listWebhooks(db: Db, repositoryId: number): Promise<Webhook[]> {
  return (await db('webhooks').where('repository_id', repositoryId).orderBy('id')).map(toWebhook);
}

/** The webhooks of an organization (SPEC §5.4), oldest first. */
export async function listOrgWebhooks(db: Db, orgId: number): Promise<Webhook[]> {
  return (await db('webhooks').where('org_id', orgId).orderBy('id')).map(toWebhook);
}

/** A webhook by its global id, or undefined. */
export async function findWebhook(db: Db | Knex.Transaction, id: number): Promise<Webhook | undefined> {
  const row = await db('webhooks').where('id', id).first();
  return row ? toWebhook(row) : undefined;
}

/**
 * Creates a webhook of a repository or of an organization (at most 20 per owner, one per URL) and, when it is active,
 * its first `ping` delivery in the same transaction, then wakes the dispatcher. Returns the webhook and the secret,
 * which the caller shows once and never again.
 */
export async function createWebhook(
  context: DomainContext,
  owner: WebhookOwner,
  sender: User,
  input: WebhookInput & { url: string },
): Promise<{ webhook: Webhook; secret: string }> {
  const { db, config } = context;
  const secret = input.secret ?? generateSecret();
  const ofRepo = isRepository(owner);
  const [table, column, max, noun] = ofRepo
    ? (['repositories', 'repository_id', MAX_WEBHOOKS_PER_REPOSITORY, 'repository'] as const)
    : (['orgs', 'org_id', MAX_WEBHOOKS_PER_ORG, 'organization'] as const);
  const webhook = await db.transaction(async (trx) => {
    // Serialize creations per repository (or organization) on Postgres so the limit of 20 holds under races.
    if (isPostgres(db)) await trx(table).where('id', owner.id).forUpdate().first('id');
    const [{ count }] = await trx('webhooks').where(column, owner.id).count({ count: '*' });
    if (Number(count) >= max) throw refused('/', `a ${noun} has at most ${max} webhooks`);
    const now = Date.now();
    let id: number;
    try {
      const [row] = await trx('webhooks')
        .insert({
          repository_id: ofRepo ? owner.id : null,
          org_id: ofRepo ? null : owner.id,
          url: input.url,
          content_type: 'json',
          secret: sealWebhookSecret(config, secret),
          events: JSON.stringify(input.events ?? ['push']),
          active: input.active ?? true,
          branch_filter: input.branch_filter ?? null,
          header_style: input.header_style ?? 'wharf',
          max_rate: input.max_rate ?? null,
          max_concurrency: input.max_concurrency ?? null,
          ...sealCustomHeaders(config, input.headers ?? {}),
          created_at: now,
          updated_at: now,
        })
        .returning('id');
      id = insertedId(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw refused('/url', `this ${noun} already has a webhook with this URL`);
      throw err;
    }
    const hook = (await findWebhook(trx, id))!;
    // As GitHub does: a new active webhook is sent a ping at once.
    if (hook.active) await insertPing(trx, config, owner, sender, hook);
    return hook;
  });
  if (webhook.active) wake(context).deliveries();
  return { webhook, secret };
}

/**
 * Applies a partial update (a new secret is sealed with the configuration's key); undefined
 * when the webhook is gone. `active: true` on a paused or disabled webhook resumes it at
 * once (SPEC §5.5): healthy, its held deliveries released in the order they were created.
 */
export async function updateWebhook(context: DomainContext, id: number, input: WebhookInput): Promise<Webhook | undefined> {
  const { db, config } = context;
  // Resumed at once, its held deliveries released (and the dispatcher woken for them).
  if (input.active === true) await resumeWebhook(context, id);
  const patch: Record<string, unknown> = { updated_at: Date.now() };
  if (input.url !== undefined) patch.url = input.url;
  if (input.secret !== undefined) patch.secret = sealWebhookSecret(config, input.secret);
  if (input.events !== undefined) patch.events = JSON.stringify(input.events);
  if (input.active !== undefined) patch.active = input.active;
  // Deactivated by its owner: no longer disabled by Wharf, so its events make no delivery
  // (only a webhook Wharf disabled holds them); anything it held is released, as pending
  // deliveries of an inactive webhook are sent.
  if (input.active === false) Object.assign(patch, healthy(Date.now()));
  if (input.branch_filter !== undefined) patch.branch_filter = input.branch_filter;
  if (input.header_style !== undefined) patch.header_style = input.header_style;
  if (input.max_rate !== undefined) patch.max_rate = input.max_rate;
  if (input.max_concurrency !== undefined) patch.max_concurrency = input.max_concurrency;
  // The whole set is replaced; `{}` removes every custom header.
  if (input.headers !== undefined) Object.assign(patch, sealCustomHeaders(config, input.headers));
  try {
    const n = await db('webhooks').where('id', id).update(patch);
    if (n === 0) return undefined;
  } catch (err) {
    if (isUniqueViolation(err)) throw refused('/url', "this webhook's owner already has a webhook with this URL");
    throw err;
  }
  return findWebhook(db, id);
}

/** A webhook's custom headers, opened (for the web UI's form, which keeps a header whose value is left blank); {} when none. */
export async function currentCustomHeaders(db: Db, id: number): Promise<Record<string, string>> {
  const row = await db('webhooks').where('id', id).first('headers');
  return row?.headers ? openCustomHeaders(row.headers).send : {};
}

/**
 * Deletes a webhook and cancels its pending deliveries: they go with it (cascade), and
 * an attempt already in flight finds no row to record into, so nothing is retried.
 */
export async function deleteWebhook(db: Db, id: number): Promise<boolean> {
  return db.transaction(async (trx) => {
    await trx('deliveries').where({ webhook_id: id, status: 'pending' }).delete();
    return (await trx('webhooks').where('id', id).delete()) > 0;
  });
}
