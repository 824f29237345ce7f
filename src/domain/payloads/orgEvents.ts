import type { Config } from '../../config.ts';
import type { NewEvent } from '../../events/types.ts';
import { organizationPayload, repositoryPayload, senderPayload, type RepositoryFields } from './common.ts';

/** Who caused an event; null when unknown or gone (`ghost`). */
type Sender = { id: number; login: string } | null;

/** A repository as these events read it. */
type Repository = RepositoryFields & { org_id: number };
import type { REPOSITORY_ACTIONS, RepositoryEventPayload } from './schemas/repository.ts';
import type { IMPORT_ACTIONS, ImportPayload } from './schemas/importJob.ts';

/**
 * A `repository` event (SPEC §6): created, deleted or mirror_cutover; organization
 * webhooks only. A deleted repository's event names no repository row (the row is gone
 * with its events): it belongs to the organization.
 */
export function repositoryEvent(config: Config, action: (typeof REPOSITORY_ACTIONS)[number], repo: Repository, sender: Sender): NewEvent {
  const payload: RepositoryEventPayload = {
    event: 'repository',
    action,
    repository: repositoryPayload(config, repo),
    organization: organizationPayload(config, repo.org),
    sender: senderPayload(sender),
  };
  return {
    repositoryId: action === 'deleted' ? null : repo.id,
    orgId: repo.org_id,
    type: 'repository',
    action,
    senderId: sender?.id ?? null,
    payload,
  };
}

/** What an `import` event reads of an import job. */
export interface ImportSubject {
  id: number;
  source_url: string;
  error: string | null;
  mirror: boolean;
  org_id: number;
  org: string;
}

/** An `import` event (SPEC §6): an import job ended; organization webhooks only. */
export function importEvent(config: Config, action: (typeof IMPORT_ACTIONS)[number], job: ImportSubject, repo: Repository | null, sender: Sender): NewEvent {
  const payload: ImportPayload = {
    event: 'import',
    action,
    import: { id: job.id, source_url: job.source_url, status: action, error: action === 'failed' ? job.error : null, mirror: job.mirror },
    repository: repo && repositoryPayload(config, repo),
    organization: organizationPayload(config, job.org),
    sender: senderPayload(sender),
  };
  return { repositoryId: null, orgId: job.org_id, type: 'import', action, senderId: sender?.id ?? null, payload };
}
