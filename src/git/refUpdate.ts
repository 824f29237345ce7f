/** One accepted ref update, as git reports it to post-receive (and as a mirror sync or a merge makes one). */
export interface RefUpdate {
  before: string;
  after: string;
  ref: string;
}

/** True for git's all-zero object name: the ref did not exist (before) or was deleted (after). */
export const isZero = (sha: string) => /^0+$/.test(sha);
