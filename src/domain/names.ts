import { worded } from '../util/schema.ts';

/** What a name must be, in words: the message that refuses one, in the API's 422 details, the web forms and the CLI. */
export const NAME_RULE = 'must be letters, digits, ".", "_" and "-", starting with a letter or digit; up to 100 characters; no ".." and not ending in ".git"';

/** Pattern for user, organization and repository names: safe in URLs and as directory names. */
export const NAME_PATTERN = worded('^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$', NAME_RULE);

const NAME = new RegExp(NAME_PATTERN);

/** True when a name is usable as a login, organization or repository name. */
export function isValidName(name: string): boolean {
  return NAME.test(name) && !name.toLowerCase().endsWith('.git') && !name.includes('..');
}
