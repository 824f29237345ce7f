/** A unique violation from either dialect (SQLite or Postgres), classified by its code. */
export function isUniqueViolation(err: any): boolean {
  return err?.code === '23505' || err?.code === 'SQLITE_CONSTRAINT_UNIQUE' || err?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
