/** Exit codes of every wharf command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** Raised by a command for a failure the user should read in one line (exit 1): the CLI's own refusals (its arguments, its lookups); the domain's refusals are WharfErrors, printed by main(). */
export class CliError extends Error {}

/** Wraps a command's action so its exit code reaches main(). */
export type RunWrapper = (action: () => Promise<number | void>) => () => Promise<void>;
