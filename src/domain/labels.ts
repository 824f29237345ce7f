import type { Knex } from 'knex';
import { chunksFor, insertValues } from './batch.ts';

/** Makes sure every label name exists in the repository, creating the missing ones; returns name → id. */
export async function ensureLabels(trx: Knex.Transaction, repositoryId: number, names: Iterable<string>): Promise<Map<string, number>> {
  const wanted = [...new Set(names)];
  const ids = new Map<string, number>();
  if (wanted.length === 0) return ids;
  await insertValues(
    trx,
    'labels',
    wanted.map((name) => ({ repository_id: repositoryId, name })),
    { conflict: { target: ['repository_id', 'name'] } },
  );
  for (const chunk of chunksFor(wanted, 1)) {
    const rows = await trx('labels').where('repository_id', repositoryId).whereIn('name', chunk).select('id', 'name');
    for (const row of rows) ids.set(row.name, Number(row.id));
  }
  return ids;
}

/** Links issues that have no labels yet to theirs: `byIssue` maps issue id → label names, created where missing. */
export async function addLabels(trx: Knex.Transaction, repositoryId: number, byIssue: Map<number, string[]>): Promise<void> {
  const ids = await ensureLabels(trx, repositoryId, [...byIssue.values()].flat());
  const links: { issue_id: number; label_id: number }[] = [];
  for (const [issueId, names] of byIssue) {
    for (const name of new Set(names)) links.push({ issue_id: issueId, label_id: ids.get(name)! });
  }
  await insertValues(trx, 'issue_labels', links);
}

/** Replaces the labels of many issues at once: `byIssue` maps issue id → label names. */
export async function replaceLabels(trx: Knex.Transaction, repositoryId: number, byIssue: Map<number, string[]>): Promise<void> {
  const issueIds = [...byIssue.keys()];
  for (const chunk of chunksFor(issueIds, 1)) await trx('issue_labels').whereIn('issue_id', chunk).delete();
  await addLabels(trx, repositoryId, byIssue);
}

/** Label names of each issue, sorted by name: issue id → names. */
export async function labelsOf(db: Knex | Knex.Transaction, issueIds: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>(issueIds.map((id) => [id, []]));
  for (const chunk of chunksFor(issueIds, 1)) {
    const rows = await db('issue_labels as il')
      .join('labels as l', 'l.id', 'il.label_id')
      .whereIn('il.issue_id', chunk)
      .orderBy('l.name')
      .select('il.issue_id', 'l.name');
    for (const row of rows) out.get(Number(row.issue_id))!.push(row.name);
  }
  return out;
}
