import type { Knex } from 'knex';
import type { Services } from '../services.ts';
import type { Db } from '../db/connect.ts';
import type { DbBool, DbInt } from '../db/rows.ts';
import type { User } from './accounts.ts';
import type { Repository } from './repos.ts';
import { insertedId } from '../db/results.ts';
import { branchCommit, commitExists, dirOf, isValidRefName, refCommit, ZERO_SHA } from './refs.ts';
import { withEvents } from './produce.ts';
import { producerEvent } from './payloads/index.ts';
import { pushEventsFor } from './pushEvents.ts';
import { git } from '../git/run.ts';
import { conflict, validationFailed } from '../errors/wharfError.ts';
import type { NewRelease } from './inputs/releases.ts';

/** A release: a tag with a name, notes and flags. */
export interface Release {
  id: number;
  tag_name: string;
  name: string;
  body: string;
  draft: boolean;
  prerelease: boolean;
  target_commitish: string;
  author: string | null;
  created_at: number;
  published_at: number | null;
}

function releaseRows(db: Db | Knex.Transaction, repo: Repository) {
  return db('releases as r').leftJoin('users as u', 'u.id', 'r.author_id').where('r.repository_id', repo.id).select('r.*', 'u.login as author');
}

/** A `releases` row with its author's login (releaseRows), as either driver gives it. */
interface ReleaseRow extends Omit<Release, 'id' | 'draft' | 'prerelease' | 'created_at' | 'published_at'> {
  id: DbInt;
  draft: DbBool;
  prerelease: DbBool;
  created_at: DbInt;
  published_at: DbInt | null;
}

function toRelease(r: ReleaseRow): Release {
  return {
    id: Number(r.id),
    tag_name: r.tag_name,
    name: r.name,
    body: r.body,
    draft: Boolean(r.draft),
    prerelease: Boolean(r.prerelease),
    target_commitish: r.target_commitish,
    author: r.author ?? null,
    created_at: Number(r.created_at),
    published_at: r.published_at === null ? null : Number(r.published_at),
  };
}

/** A release of a repository by id, or undefined. */
export async function findRelease(db: Db | Knex.Transaction, repo: Repository, id: number): Promise<Release | undefined> {
  const r = await releaseRows(db, repo).where('r.id', id).first();
  return r ? toRelease(r) : undefined;
}

/** The release of a tag (tag names are unique in a repository), or undefined. */
export async function findReleaseByTag(db: Db, repo: Repository, tag: string): Promise<Release | undefined> {
  const r = await releaseRows(db, repo).where('r.tag_name', tag).first();
  return r ? toRelease(r) : undefined;
}

/** A page of a repository's releases, newest first (by creation; `before` is the id to continue below); drafts only when asked for. */
export async function listReleases(db: Db, repo: Repository, options: { limit: number; before?: number; drafts: boolean }): Promise<Release[]> {
  const q = releaseRows(db, repo).orderBy('r.id', 'desc').limit(options.limit);
  if (!options.drafts) q.where('r.draft', false);
  if (options.before !== undefined) q.where('r.id', '<', options.before);
  return (await q).map(toRelease);
}

/** The commit a `target_commitish` (a branch name or a full commit sha) names, or a 422. */
async function resolveTarget(services: Services, repo: Repository, target: string): Promise<string> {
  if (/^[0-9a-f]{40}$/.test(target) && (await commitExists(services.config, repo, target))) return target;
  const sha = await branchCommit(services.config, repo, target);
  if (!sha) throw validationFailed([{ path: '/target_commitish', message: `${target} is neither a branch nor a commit of this repository` }]);
  return sha;
}

/**
 * Creates a release. A published (non-draft) release whose tag is missing creates
 * it, as a lightweight tag at `target_commitish` (default: the default branch), and
 * raises a `push` event for the new tag ref, as GitHub does; then `release published`.
 * A draft, as on GitHub, creates no tag and raises nothing until it is published.
 */
export async function createRelease(services: Services, repo: Repository, author: User, input: NewRelease): Promise<Release> {
  const ref = `refs/tags/${input.tag_name}`;
  // `refs/heads/main` would make the tag refs/tags/refs/heads/main, which git reads ambiguously: a tag name is a short name.
  if (input.tag_name.startsWith('refs/')) throw validationFailed([{ path: '/tag_name', message: 'must be a short tag name, not a ref starting with refs/' }]);
  if (!(await isValidRefName(ref))) throw validationFailed([{ path: '/tag_name', message: 'is not a valid tag name' }]);
  if (await services.db('releases').where({ repository_id: repo.id, tag_name: input.tag_name }).first('id')) {
    throw conflict(`A release for tag ${input.tag_name} already exists`);
  }
  const target = input.target_commitish ?? repo.default_branch;
  const draft = input.draft ?? false;
  const existing = await refCommit(services.config, repo, ref);
  const createTag = !draft && !existing;
  const tagSha = createTag ? await resolveTarget(services, repo, target) : undefined;
  const update = { before: ZERO_SHA, after: tagSha!, ref };
  const pushEvents = createTag ? await pushEventsFor(services, repo, author, [update]) : [];
  const id = await withEvents(services, async (trx, raise) => {
    const now = Date.now();
    const [row] = await trx('releases')
      .insert({
        repository_id: repo.id,
        tag_name: input.tag_name,
        name: input.name ?? input.tag_name,
        body: input.body ?? '',
        draft,
        prerelease: input.prerelease ?? false,
        target_commitish: target,
        author_id: author.id,
        created_at: now,
        published_at: draft ? null : now,
      })
      .returning('id');
    const release = (await findRelease(trx, repo, insertedId(row)))!;
    if (!draft) raise(...pushEvents, producerEvent(services.config, 'release', 'published', repo, author, release));
    if (createTag) {
      // Last step: an empty old value makes git refuse if the tag appeared meanwhile, rolling all of this back.
      try {
        await git(['update-ref', '-m', 'release', ref, tagSha!, ''], { cwd: dirOf(services.config, repo) });
      } catch {
        throw conflict(`Tag ${input.tag_name} was created meanwhile; try again`);
      }
    }
    return release.id;
  });
  return (await findRelease(services.db, repo, id))!;
}
