import { connectionPool, type Db } from '../../db/connect.ts';
import { affected } from '../../db/results.ts';

/** The part of a node-postgres connection used here. */
interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/**
 * Runs one of the dispatcher's hot statements on a pooled Postgres connection as a named
 * (prepared) statement: node-postgres prepares it once per connection and later calls
 * only bind and execute, so Postgres does not plan it again on every claim or result
 * write. Statements given a name must keep the same text (the name stands for it).
 * `R` is the row the statement returns, as node-postgres gives it.
 */
export async function preparedQuery<R = unknown>(db: Db, name: string, text: string, values: unknown[]): Promise<{ rows: R[]; rowCount: number }> {
  const client = connectionPool<PgConnection>(db);
  const conn = await client.acquireConnection();
  try {
    const result = await conn.query({ name, text, values });
    return { rows: result.rows as R[], rowCount: affected(result) };
  } finally {
    await client.releaseConnection(conn);
  }
}
