/** Pattern for user, organization and repository names: safe in URLs and as directory names. */
export const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$';

const NAME = new RegExp(NAME_PATTERN);

/** True when a name is usable as a login, organization or repository name. */
export function isValidName(name: string): boolean {
  return NAME.test(name) && !name.toLowerCase().endsWith('.git') && !name.includes('..');
}
