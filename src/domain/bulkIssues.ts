import type { Knex } from 'knex';
import type { Db } from '../db/connect.ts';
import type { User } from './accounts.ts';
import type { Repository } from './repos.ts';
import { chunksFor, insertValues, lockRepository } from './batch.ts';
import { addLabels, replaceLabels } from './labels.ts';
import { conflict, type ErrorDetail } from '../errors/wharfError.ts';
import type { BulkIssue, OnConflict } from './inputs/bulkIssues.ts';

export interface BulkResult {
  created: number;
  updated: number;
  skipped: number;
}

/** Numbers already used in the repository: number → kind. */
async function existingNumbers(trx: Knex.Transaction, repositoryId: number, numbers: number[]): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  for (const chunk of chunksFor(numbers, 1)) {
    const rows = await trx('issues').where('repository_id', repositoryId).whereIn('number', chunk).select('number', 'kind');
    for (const row of rows) found.set(Number(row.number), row.kind);
  }
  return found;
}

/** The issues row of a record; `now` stands in for missing times. */
function toRow(repositoryId: number, authorId: number, issue: BulkIssue, now: number) {
  const createdAt = issue.created_at ? Date.parse(issue.created_at) : now;
  const state = issue.state ?? 'open';
  const closedAt = state === 'closed' ? (issue.closed_at ? Date.parse(issue.closed_at) : now) : null;
  return {
    repository_id: repositoryId,
    number: issue.number,
    kind: 'issue',
    title: issue.title,
    body: issue.body ?? '',
    state,
    assignees: JSON.stringify(issue.assignees ?? []),
    author_id: authorId,
    created_at: createdAt,
    updated_at: Math.max(createdAt, closedAt ?? 0),
    closed_at: closedAt,
  };
}

type Row = ReturnType<typeof toRow>;

/**
 * Writes rows in multi-row statements sized to the variable limit; with `merge`, a row
 * whose number exists updates that issue in place (its id, comments and kind kept), or
 * is left out when `merge` is empty.
 * Returns issue id by number.
 */
async function writeRows(trx: Knex.Transaction, rows: Row[], merge?: (keyof Row)[]): Promise<Map<number, number>> {
  const conflict = merge && { target: ['repository_id', 'number'], merge };
  const written = await insertValues<{ id: number; number: number }>(trx, 'issues', rows, { returning: ['id', 'number'], conflict });
  return new Map(written.map((r) => [Number(r.number), Number(r.id)]));
}

const UPDATED_FIELDS: (keyof Row)[] = ['title', 'body', 'state', 'assignees', 'updated_at', 'closed_at'];

/**
 * Imports issues with their numbers, all or nothing, in one transaction and in batches;
 * raises no events (SPEC §8.2). `on_conflict` decides what a number already in the
 * repository means: `error` a 409 naming each, `skip` leave it, `update` overwrite the
 * issue (a pull request's number is a 409 in that mode: it cannot become an issue).
 */
export async function importIssues(db: Db, repo: Repository, importer: User, issues: BulkIssue[], onConflict: OnConflict): Promise<BulkResult> {
  return db.transaction(async (trx) => {
    await lockRepository(trx, repo.id);
    const now = Date.now();
    // Every record is written as a new issue first, a number already used left as it is:
    // the numbers that did not come back are the conflicts, found without reading every
    // number beforehand. A conflict that fails the request rolls it all back.
    const ids = await writeRows(
      trx,
      issues.map((i) => toRow(repo.id, importer.id, i, now)),
      [],
    );
    const taken = issues.filter((i) => !ids.has(i.number));
    const existing =
      taken.length > 0
        ? await existingNumbers(
            trx,
            repo.id,
            taken.map((i) => i.number),
          )
        : new Map<number, string>();
    const clash = (i: number, message: string): ErrorDetail => ({ path: `/issues/${i}/number`, message });
    const clashes: ErrorDetail[] = [];
    issues.forEach((issue, i) => {
      const kind = existing.get(issue.number);
      if (kind === undefined || onConflict === 'skip') return;
      if (onConflict === 'error') clashes.push(clash(i, `issue or pull request #${issue.number} already exists`));
      else if (kind !== 'issue') clashes.push(clash(i, `#${issue.number} is a pull request`));
    });
    if (clashes.length > 0) throw conflict('Some numbers are already used in this repository', clashes);

    const fresh = issues.filter((i) => !existing.has(i.number));
    const updates = onConflict === 'update' ? taken : [];
    // created_at is overwritten only where the record gives one.
    const dated = updates.filter((i) => i.created_at !== undefined);
    const undated = updates.filter((i) => i.created_at === undefined);
    for (const [group, fields] of [
      [dated, [...UPDATED_FIELDS, 'created_at']],
      [undated, UPDATED_FIELDS],
    ] as const) {
      for (const [number, id] of await writeRows(
        trx,
        group.map((i) => toRow(repo.id, importer.id, i, now)),
        [...fields],
      ))
        ids.set(number, id);
    }
    // New issues have no links to replace (their labels are only added); updated ones lose their old labels.
    const added = new Map<number, string[]>();
    const replaced = new Map<number, string[]>();
    for (const issue of fresh) if (issue.labels?.length) added.set(ids.get(issue.number)!, issue.labels);
    for (const issue of updates) replaced.set(ids.get(issue.number)!, issue.labels ?? []);
    if (replaced.size > 0) await replaceLabels(trx, repo.id, replaced);
    if (added.size > 0) await addLabels(trx, repo.id, added);
    return { created: fresh.length, updated: updates.length, skipped: issues.length - fresh.length - updates.length };
  });
}
