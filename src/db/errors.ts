import { errorCode } from '../errors/thrown.ts';

/** A unique violation from either dialect (SQLite or Postgres), classified by its code. */
export function isUniqueViolation(err: unknown): boolean {
  const code = errorCode(err);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
