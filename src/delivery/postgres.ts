import type { Db } from '../db/connect.ts';

/**
 * Runs one of the dispatcher's hot statements on a pooled Postgres connection as a named
 * (prepared) statement: node-postgres prepares it once per connection and later calls
 * only bind and execute, so Postgres does not plan it again on every claim or result
 * write. Statements given a name must keep the same text (the name stands for it).
 */
export async function preparedQuery(db: Db, name: string, text: string, values: unknown[]): Promise<{ rows: any[]; rowCount: number }> {
  const client = db.client as any;
  const conn = await client.acquireConnection();
  try {
    const result = await conn.query({ name, text, values });
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  } finally {
    await client.releaseConnection(conn);
  }
}
