/** A column that holds sealed secrets, and the purpose its values are sealed for. */
export interface SealedColumn {
  table: string;
  column: string;
  purpose: string;
}

/** Every column whose values are sealed with SECRET_KEY: start-up checks them, `wharf rotate-key` re-seals them. */
export const SEALED_COLUMNS: SealedColumn[] = [
  { table: 'webhooks', column: 'secret', purpose: 'webhooks.secret' },
  { table: 'webhooks', column: 'headers', purpose: 'webhooks.headers' },
  { table: 'import_jobs', column: 'credentials', purpose: 'import_jobs.credentials' },
  { table: 'push_mirrors', column: 'credentials', purpose: 'push_mirrors.credentials' },
  { table: 'repository_mirrors', column: 'credentials', purpose: 'import_jobs.credentials' },
];

/** The `settings` row holding a known text sealed with the key, so a wrong key is seen before any secret exists. */
export const KEY_CHECK = { name: 'secret_key_check', purpose: 'settings.secret_key_check', text: 'wharf secret key check' } as const;

/**
 * The prefix the migration put on values stored before secrets were sealed; start-up
 * seals them once the key is known (a migration cannot know a key generated at start).
 */
export const LEGACY_PREFIX = 'plain:';
