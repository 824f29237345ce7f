import fs from 'node:fs/promises';
import type { Db } from '../db/connect.ts';
import type { DbInt } from '../db/rows.ts';
import { initBareRepository, repoDir } from '../git/bare.ts';
import { roleIn, type Org, type User } from './accounts.ts';
import { alreadyExists } from '../errors/wharfError.ts';
import type { Visibility } from './visibility.ts';
import type { NewRepository } from './inputs/repos.ts';
import { errorCode } from '../errors/thrown.ts';
import { recordOrgEvents } from '../events/outbox.ts';
import { repositoryEvent } from './payloads/orgEvents.ts';
import { wake, type DomainContext } from '../services.ts';
import { insertedId } from '../db/results.ts';

/** Who caused a change, for its events; null when unknown. */
type Sender = { id: number; login: string } | null;

export { VISIBILITIES, type Visibility } from './visibility.ts';

/** A repository row joined with its organization's name. */
export interface Repository {
  id: number;
  org_id: number;
  org: string;
  name: string;
  visibility: Visibility;
  default_branch: string;
  description: string;
  created_at: number;
  updated_at: number;
}

/** What a caller may do with a repository. */
export interface Access {
  read: boolean;
  write: boolean;
  admin: boolean;
}

/** A `repositories` row with its organization's name, as either driver gives it. */
interface RepositoryRow extends Omit<Repository, 'created_at' | 'updated_at'> {
  created_at: DbInt;
  updated_at: DbInt;
}

function toRepository(row: RepositoryRow): Repository {
  return { ...row, created_at: Number(row.created_at), updated_at: Number(row.updated_at) };
}

/** A repository by organization and name, or undefined. */
export async function findRepository(db: Db, org: string, name: string): Promise<Repository | undefined> {
  const row = await db('repositories as r').join('orgs as o', 'o.id', 'r.org_id').where({ 'o.name': org, 'r.name': name }).first('r.*', 'o.name as org');
  return row ? toRepository(row) : undefined;
}

/** A repository by id, or undefined. */
export async function repositoryById(db: Db, id: number): Promise<Repository | undefined> {
  const row = await db('repositories as r').join('orgs as o', 'o.id', 'r.org_id').where('r.id', id).first('r.*', 'o.name as org');
  return row ? toRepository(row) : undefined;
}

/** Repositories of an organization that the caller may see, by name. */
export async function listRepositories(db: Db, org: Org, user: User | null): Promise<Repository[]> {
  const role = await roleIn(db, org.id, user);
  const q = db('repositories as r').join('orgs as o', 'o.id', 'r.org_id').where('r.org_id', org.id).orderBy('r.name').select('r.*', 'o.name as org');
  if (!role) q.whereIn('r.visibility', user ? ['public', 'internal'] : ['public']);
  return (await q).map(toRepository);
}

/**
 * Creates a repository row and its bare Git repository, and raises `repository` created
 * (SPEC §6, organization webhooks) in the same transaction. The row is written in a
 * transaction that commits only once the directory exists, so neither outlives a failure.
 * Wakes the dispatcher for the event once committed.
 */
export async function createRepository(context: DomainContext, input: NewRepository & { org: Org }, sender: Sender = null): Promise<Repository> {
  const { db, config } = context;
  const dir = repoDir(config.reposDir, input.org.name, input.name);
  const defaultBranch = input.default_branch ?? 'main';
  const id = await db.transaction(async (trx) => {
    const now = Date.now();
    const fields = {
      org_id: input.org.id,
      name: input.name,
      visibility: input.visibility ?? ('private' as const),
      default_branch: defaultBranch,
      description: input.description ?? '',
      created_at: now,
      updated_at: now,
    };
    const [row] = await trx('repositories').insert(fields).returning('id');
    const id = insertedId(row);
    await recordOrgEvents(trx, [repositoryEvent(config, 'created', { ...fields, id, org: input.org.name }, sender)]);
    try {
      await initBareRepository(dir, defaultBranch);
    } catch (err) {
      if (errorCode(err) === 'EEXIST') throw alreadyExists(`Repository directory ${input.org.name}/${input.name}.git already exists`);
      throw err;
    }
    return id;
  });
  wake(context).deliveries();
  return (await repositoryById(db, id))!;
}

/**
 * Deletes a repository (SPEC §6 `DELETE /repos/<org>/<repo>`): its row, with it (cascade)
 * its webhooks, their deliveries and everything else of it, and raises `repository`
 * deleted at the organization's webhooks in the same transaction, and wakes the
 * dispatcher for it; then removes its directory.
 */
export async function deleteRepository(context: DomainContext, repo: Repository, sender: Sender): Promise<void> {
  const { db, config } = context;
  await db.transaction(async (trx) => {
    await trx('deliveries').whereIn('webhook_id', trx('webhooks').where('repository_id', repo.id).select('id')).where('status', 'pending').delete();
    await trx('webhooks').where('repository_id', repo.id).delete();
    await trx('repositories').where('id', repo.id).delete();
    await recordOrgEvents(trx, [repositoryEvent(config, 'deleted', repo, sender)]);
  });
  wake(context).deliveries();
  await fs.rm(repoDir(config.reposDir, repo.org, repo.name), { recursive: true, force: true });
}
