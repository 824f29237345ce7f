import type { Knex } from 'knex';

// An import may name its source's LFS endpoint (`lfs_url`) when the one guessed from
// the clone URL is wrong (git:// sources, LFS served from another host).

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('import_jobs', (t) => {
    // Never holds a credential: user info is refused at request time.
    t.string('lfs_url', 2048);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('import_jobs', (t) => {
    t.dropColumn('lfs_url');
  });
}
