import type { Db } from '../../db/connect.ts';
import { compile } from '../../http/validate.ts';
import { OID_PATTERN, type LfsDirectAction, type LfsOperation, type LfsStore } from '../../lfs/lfsStore.ts';
import { repositoryHasObject } from '../../lfs/links.ts';

/** The batch request body of the git-lfs API (docs/api/batch.md). */
export const parseBatch = compile({
  type: 'object',
  required: ['operation', 'objects'],
  properties: {
    operation: { type: 'string', enum: ['download', 'upload'] },
    transfers: { type: 'array', items: { type: 'string' } },
    ref: { type: 'object', properties: { name: { type: 'string' } } },
    objects: {
      type: 'array',
      maxItems: 10000,
      items: {
        type: 'object',
        required: ['oid', 'size'],
        properties: { oid: { type: 'string', maxLength: 128 }, size: { type: 'integer', minimum: 0 } },
      },
    },
    hash_algo: { type: 'string' },
  },
} as const);

/** A store's download address as git-lfs reads an action: `expires_in` in seconds. */
function direct({ href, header, expiresIn }: LfsDirectAction) {
  return { href, ...(header ? { header } : {}), ...(expiresIn !== undefined ? { expires_in: expiresIn } : {}) };
}

/** Wharf's own transfer routes for a repository's LFS objects, and the header that authorizes them. */
export interface BatchLinks {
  objectHref: (oid: string) => string;
  verifyHref: string;
  header: Record<string, string>;
}

/**
 * Answers each object of a batch request: a download link for an object this repository
 * holds; an upload (and verify) link for one it does not. An object already stored for
 * another repository is still uploaded: linking it without the bytes would let anyone who
 * knows an oid read it out of a repository they cannot see. A download goes to the store's
 * own address when it hands one out (`downloadHref`: a presigned GET, asked for only once
 * the object is known to be linked to this repository, so an address is never signed for
 * an object of a repository the caller cannot read), else to Wharf's route; uploads and
 * verify are always Wharf's, which checks the bytes against the oid as they pass.
 */
export async function answerBatch(
  db: Db,
  lfs: LfsStore,
  repositoryId: number,
  operation: LfsOperation,
  objects: { oid: string; size: number }[],
  links: BatchLinks,
) {
  const answers = [];
  for (const { oid, size } of objects) {
    if (!OID_PATTERN.test(oid)) {
      answers.push({ oid, size, error: { code: 422, message: 'The object id must be 64 lowercase hex digits' } });
      continue;
    }
    const held = (await repositoryHasObject(db, repositoryId, oid)) ? await lfs.size(oid) : null;
    // The caller's credentials go to Wharf's routes only, never to a store's own address.
    const own = { href: links.objectHref(oid), header: links.header };
    if (operation === 'download') {
      if (held === null) answers.push({ oid, size, error: { code: 404, message: 'Object does not exist' } });
      else answers.push({ oid, size: held, authenticated: true, actions: { download: lfs.downloadHref ? direct(await lfs.downloadHref(oid)) : own } });
    } else if (held === size) {
      answers.push({ oid, size, authenticated: true }); // already here: nothing to send
    } else {
      const verify = { href: links.verifyHref, header: links.header };
      answers.push({ oid, size, authenticated: true, actions: { upload: own, verify } });
    }
  }
  return answers;
}
