import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { contentCheck } from './integrity.ts';
import { OID_PATTERN, type LfsStore } from './lfsStore.ts';

/** Where an object lives under the store's directory: `ab/cd/<oid>`. */
function objectPath(dir: string, oid: string): string {
  if (!OID_PATTERN.test(oid)) throw new Error('invalid oid');
  return path.join(dir, oid.slice(0, 2), oid.slice(2, 4), oid);
}

/**
 * The LFS store on a file system (LFS_DIR): one file per object at `ab/cd/<oid>`.
 * Content is written to a temporary file under `tmp/`, fsynced, and renamed into place
 * only when it matches, so a mismatch or an aborted upload stores nothing.
 */
export function createFsLfsStore(dir: string): LfsStore {
  return {
    async size(oid) {
      try {
        return (await fsp.stat(objectPath(dir, oid))).size;
      } catch {
        return null;
      }
    },

    async open(oid) {
      return fs.createReadStream(objectPath(dir, oid));
    },

    async write(oid, size, source) {
      const final = objectPath(dir, oid);
      const tmpDir = path.join(dir, 'tmp');
      await fsp.mkdir(tmpDir, { recursive: true });
      const tmp = path.join(tmpDir, `${oid}.${randomBytes(6).toString('hex')}`);
      const check = contentCheck(oid, size);
      try {
        const out = fs.createWriteStream(tmp, { flags: 'wx' });
        await pipeline(source, check.transform, out);
        check.verify();
        const fd = await fsp.open(tmp, 'r');
        await fd.sync();
        await fd.close();
        await fsp.mkdir(path.dirname(final), { recursive: true });
        await fsp.rename(tmp, final);
      } catch (err) {
        await fsp.rm(tmp, { force: true });
        throw err;
      }
    },

    async health() {
      try {
        await fsp.mkdir(dir, { recursive: true });
        await fsp.access(dir, fs.constants.W_OK);
        return { kind: 'fs', status: 'ok' };
      } catch {
        return { kind: 'fs', status: 'unreachable' };
      }
    },
  };
}

/** Every object of a file system store (LFS_DIR), oid and size, in directory order; temporary files are left out. */
export async function listFsObjects(dir: string): Promise<{ oid: string; size: number }[]> {
  const found: { oid: string; size: number }[] = [];
  const names = async (at: string) => (await fsp.readdir(at, { withFileTypes: true }).catch(() => [])).sort((a, b) => a.name.localeCompare(b.name));
  for (const first of await names(dir)) {
    if (!first.isDirectory() || !/^[0-9a-f]{2}$/.test(first.name)) continue;
    for (const second of await names(path.join(dir, first.name))) {
      if (!second.isDirectory() || !/^[0-9a-f]{2}$/.test(second.name)) continue;
      for (const file of await names(path.join(dir, first.name, second.name))) {
        if (!file.isFile() || !OID_PATTERN.test(file.name) || !file.name.startsWith(first.name + second.name)) continue;
        const { size } = await fsp.stat(path.join(dir, first.name, second.name, file.name));
        found.push({ oid: file.name, size });
      }
    }
  }
  return found;
}
