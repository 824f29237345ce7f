import type { ImportResult } from './finalize.ts';

/** What went wrong in an import that still brought the repository over (SPEC §8.1: it succeeded). */
export interface ImportWarning {
  /** A stable code: `missing_lfs_objects`, the LFS objects the source could not give. */
  code: 'missing_lfs_objects';
  /** One sentence for people. */
  message: string;
}

/** The warnings of a finished import's result (none for a job without one). */
export function importWarnings(result: Pick<ImportResult, 'missing_lfs_objects'> | null): ImportWarning[] {
  const missing = result?.missing_lfs_objects?.length ?? 0;
  if (missing === 0) return [];
  const objects = missing === 1 ? '1 LFS object is' : `${missing} LFS objects are`;
  return [{ code: 'missing_lfs_objects', message: `${objects} missing at the source: the repository was imported without ${missing === 1 ? 'it' : 'them'}.` }];
}
