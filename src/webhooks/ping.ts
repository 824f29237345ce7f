import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import { wake, type DomainContext } from '../services.ts';
import type { Repository } from '../domain/repos.ts';
import type { Org, User } from '../domain/accounts.ts';
import { organizationPayload, repositoryPayload, senderPayload } from '../domain/payloads/common.ts';
import type { Webhook } from './model.ts';
import type { PingPayload } from '../domain/payloads/schemas/ping.ts';
import { insertedId } from '../db/results.ts';

const ZEN = [
  'Keep it logically awesome.',
  'Design for failure.',
  'Half measures are as bad as nothing at all.',
  'Anything added dilutes everything else.',
  'Approachable is better than simple.',
];

/** Whom a webhook belongs to: a repository, or an organization (SPEC §5.4). */
export type WebhookOwner = Repository | Org;

/** Whether a webhook's owner is a repository (else an organization). */
export function isRepository(owner: WebhookOwner): owner is Repository {
  return 'default_branch' in owner;
}

/**
 * The `ping` payload of SPEC §6: the hook as it is now, a zen line, repository and sender,
 * and the organization; an organization webhook's ping has `repository: null` (as GitHub's).
 */
export function pingPayload(config: Config, owner: WebhookOwner, sender: User | null, hook: Webhook): PingPayload {
  const repo = isRepository(owner) ? owner : null;
  return {
    event: 'ping',
    zen: ZEN[Math.floor(Math.random() * ZEN.length)],
    hook_id: hook.id,
    hook: { id: hook.id, url: hook.url, content_type: hook.content_type, events: hook.events as PingPayload['hook']['events'] },
    repository: repo && repositoryPayload(config, repo),
    organization: organizationPayload(config, repo ? repo.org : owner.name),
    sender: senderPayload(sender),
  };
}

/**
 * Writes a `ping` delivery for one webhook, whatever its events and even when inactive;
 * its bytes are kept on the delivery itself as no event row stands behind it.
 * Returns the delivery id. Call wake().deliveries() after the commit (sendPing does both).
 */
export async function insertPing(trx: Knex | Knex.Transaction, config: Config, owner: WebhookOwner, sender: User | null, hook: Webhook): Promise<number> {
  const now = Date.now();
  const [row] = await trx('deliveries')
    .insert({
      webhook_id: hook.id,
      payload: JSON.stringify(pingPayload(config, owner, sender, hook)),
      guid: randomUUID(),
      event: 'ping',
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      created_at: now,
    })
    .returning('id');
  return insertedId(row);
}

/** Sends a webhook a `ping` (the API's and the web UI's "ping"): writes it, then wakes the dispatcher. Returns the delivery id. */
export async function sendPing(context: DomainContext, owner: WebhookOwner, sender: User | null, hook: Webhook): Promise<number> {
  const id = await insertPing(context.db, context.config, owner, sender, hook);
  wake(context).deliveries();
  return id;
}
