import type { Org, User } from './accounts.ts';
import { createRepository, findRepository, type Repository } from './repos.ts';
import type { DomainContext } from '../services.ts';

/**
 * Push to create: creates, private, the repository a first push names, for the
 * organization member the Git access check allowed to (src/transport/git/access.ts).
 * Raises `repository` created and wakes the dispatcher for it, as createRepository does.
 * Two first pushes at once: the one that loses the race gets the winner's repository.
 */
export async function createOnFirstPush(context: DomainContext, org: Org, name: string, user: User): Promise<Repository> {
  try {
    return await createRepository(context, { org, name, visibility: 'private' }, user);
  } catch (err) {
    const existing = await findRepository(context.db, org.name, name);
    if (existing) return existing;
    throw err;
  }
}
