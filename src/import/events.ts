import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import type { Repository } from '../domain/repos.ts';
import { recordOrgEvents } from '../events/outbox.ts';
import { importEvent } from '../domain/payloads/orgEvents.ts';

/**
 * Raises an import job's `import` event (SPEC §6: succeeded, failed or canceled; its
 * organization's webhooks only) in the caller's transaction, the one that ends the job,
 * reading the job as that transaction left it (its error, its creator as the sender).
 * Call wake().deliveries() after the commit when the services are at hand.
 */
export async function raiseImportEnded(
  trx: Knex.Transaction,
  config: Config,
  jobId: number,
  action: 'succeeded' | 'failed' | 'canceled',
  repo: Repository | null = null,
): Promise<void> {
  const row = await trx('import_jobs as j')
    .join('orgs as o', 'o.id', 'j.target_org_id')
    .leftJoin('users as u', 'u.id', 'j.created_by')
    .where('j.id', jobId)
    .first('j.id', 'j.source_url', 'j.error', 'j.mirror_interval_ms', 'j.target_org_id', 'o.name as org', 'u.id as user_id', 'u.login as user_login');
  if (!row) return;
  const sender = row.user_id === null || row.user_id === undefined ? null : { id: Number(row.user_id), login: String(row.user_login) };
  const job = {
    id: Number(row.id),
    source_url: String(row.source_url),
    error: row.error ?? null,
    mirror: row.mirror_interval_ms !== null && row.mirror_interval_ms !== undefined,
    org_id: Number(row.target_org_id),
    org: String(row.org),
  };
  await recordOrgEvents(trx, [importEvent(config, action, job, repo, sender)]);
}
