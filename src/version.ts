import { readFileSync } from 'node:fs';

/** Wharf's version, from package.json. */
export const version: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
