/**
 * What a statement gave back, read the same from either driver: node-postgres answers with
 * a result object (`rows`, `rowCount`), better-sqlite3 with the rows themselves or a
 * `changes` count. Callers read results through these rather than branch on the driver.
 */

/** The id of a row inserted with `.returning('id')`: a `{ id }` row, or the bare id some drivers give. */
export function insertedId(row: unknown): number {
  return typeof row === 'object' && row !== null ? Number((row as { id: unknown }).id) : Number(row);
}

/** The rows of a `db.raw` statement: node-postgres's `result.rows`, or better-sqlite3's array itself. */
export function rawRows<R>(result: unknown): R[] {
  return Array.isArray(result) ? (result as R[]) : (result as { rows: R[] }).rows;
}

/** How many rows a statement changed: node-postgres's `rowCount` (null for some commands), better-sqlite3's `changes`. */
export function affected(result: { rowCount?: number | null; changes?: number }): number {
  return result.rowCount ?? result.changes ?? 0;
}
