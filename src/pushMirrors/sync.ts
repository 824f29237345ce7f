import path from 'node:path';
import type { Services } from '../services.ts';
import type { Repository } from '../domain/repos.ts';
import { repositoryById } from '../domain/repos.ts';
import { repoDir } from '../git/bare.ts';
import { linkedObjects } from '../lfs/links.ts';
import { HostPolicyError } from '../net/hostPolicy.ts';
import { openSecret } from '../secrets/box.ts';
import { askpassProgram, GitAbortedError, GitRunError, remoteGit } from '../remote/gitRemote.ts';
import { scrubSecrets } from '../remote/gitErrors.ts';
import { lfsEndpoint } from '../remote/lfsFetch.ts';
import { StallError } from '../remote/limits.ts';
import { parseSourceUrl, pinSource, type Credentials } from '../remote/url.ts';
import { reachableLfsPointers, type LfsPointer } from '../remote/lfsScan.ts';
import { uploadLfsObjects } from './lfsUpload.ts';
import { CREDENTIALS_PURPOSE, type PushMirror } from './store.ts';

/** Branches and tags, mirrored: forced, and refs the repository no longer has are deleted there (`--prune`). */
const REFSPECS = ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'];

/** What one sync did. */
export interface SyncResult {
  lfsObjects: number;
  /** Objects the pushed refs name that this repository does not hold (never sent). */
  lfsMissing: number;
}

/** The LFS objects of `pointers` this repository holds itself (linked, and in the store at their size). */
async function heldObjects(services: Services, repo: Repository, pointers: LfsPointer[]): Promise<{ held: LfsPointer[]; missing: number }> {
  // SECURITY: only objects linked to this repository: a pointer naming another repository's
  // object must not send its bytes to a remote of this repository's admins' choosing.
  const linked = await linkedObjects(
    services.db,
    repo.id,
    pointers.map((p) => p.oid),
  );
  const held: LfsPointer[] = [];
  for (const p of pointers) if (linked.has(p.oid) && (await services.lfs.size(p.oid)) === p.size) held.push(p);
  return { held, missing: pointers.length - held.length };
}

/**
 * Pushes a repository to its push mirror: first the LFS objects its branches and tags
 * reference that the remote lacks (batch API upload), then every branch and tag with
 * `--prune` (deletions included), through the host-policy-checked, pinned address, the
 * credentials given to git by askpass (never in an argument or URL). Throws on failure;
 * describeSyncError words the error.
 */
export async function syncPushMirror(
  services: Services,
  mirror: PushMirror,
  credentials: Credentials | null,
  signal: AbortSignal,
  stallMs: number,
): Promise<SyncResult> {
  const { config } = services;
  const repo = await repositoryById(services.db, mirror.repository_id);
  if (!repo) throw new Error('the repository no longer exists');
  const dir = repoDir(config.reposDir, repo.org, repo.name);
  const remote = parseSourceUrl(mirror.url).url;
  const { held, missing } = await heldObjects(services, repo, await reachableLfsPointers(dir, ['--branches', '--tags']));
  const lfsObjects = await uploadLfsObjects(held, {
    endpoint: lfsEndpoint(remote),
    credentials,
    policy: config.importAllowedHosts,
    lfs: services.lfs,
    stallMs,
    signal,
  });
  // The policy is checked again on the address git connects to, on every sync.
  const pin = await pinSource(config.importAllowedHosts, remote);
  // --progress: the bytes git reports writing are what the stall watch counts as moving.
  await remoteGit(['push', '--progress', '--porcelain', '--prune', '--no-verify', '--', pin.url, ...REFSPECS], {
    cwd: dir,
    pin: pin.config,
    credentials,
    askpass: await askpassProgram(path.join(config.dataDir, 'push-mirrors')),
    signal,
    stallMs,
  });
  return { lfsObjects, lfsMissing: missing };
}

/** A mirror's credentials, opened. */
export function mirrorCredentials(services: Services, mirror: PushMirror): Credentials | null {
  return mirror.credentials ? JSON.parse(openSecret(services.config, CREDENTIALS_PURPOSE, mirror.credentials)) : null;
}

/** A sync's failure in words safe to show: scrubbed of the credentials in every form they could take. */
export function describeSyncError(err: unknown, credentials: Credentials | null): string {
  let message: string;
  if (err instanceof HostPolicyError)
    message = `the remote address is blocked by the host policy (IMPORT_ALLOWED_HOSTS): ${err.explain('IMPORT_ALLOWED_HOSTS')}`;
  else if (err instanceof GitRunError) message = err.message.replace(/\bthe source\b/g, 'the remote');
  else if (err instanceof StallError) message = err.message.replace(/\bthe source\b/g, 'the remote');
  else if (err instanceof GitAbortedError) message = 'stopped';
  else message = String((err as Error)?.message ?? err);
  return scrubSecrets(message, credentials).slice(0, 1000);
}
