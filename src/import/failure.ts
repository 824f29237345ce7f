import type { Config } from '../config.ts';
import { HostPolicyError } from '../net/hostPolicy.ts';
import { errorCode } from '../errors/thrown.ts';
import { GitAbortedError, GitRunError } from '../remote/gitRemote.ts';
import { FinalizeError } from './finalize.ts';
import { StallError } from '../remote/limits.ts';
import { scrubSecrets } from '../remote/gitErrors.ts';
import type { Credentials } from '../remote/url.ts';

/** Why an import failed, as the job keeps it: a stable code, one sentence for people, and the detail (git's words, scrubbed). */
export interface ImportFailure {
  code: FailureCode;
  reason: string;
  message: string;
}

/** The stable codes of a failed import (the API's `error_code`). */
export const FAILURE_CODES = [
  'auth_failed',
  'forbidden',
  'not_found',
  'unreachable',
  'blocked',
  'redirect',
  'timeout',
  'stalled',
  'connection_broken',
  'integrity',
  'too_large',
  'name_taken',
  'interrupted',
  'failed',
] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];

const REASONS: Record<Exclude<FailureCode, 'timeout'>, string> = {
  auth_failed: 'The source refused the credentials.',
  forbidden: 'The source refused access to the repository.',
  not_found: 'The repository was not found at the source.',
  unreachable: 'The source could not be reached.',
  blocked: "The source's address is not allowed by this server's host policy.",
  redirect: 'The source answered with a redirect, which imports do not follow.',
  stalled: 'The source stopped sending data.',
  connection_broken: 'The connection to the source kept breaking off.',
  integrity: "The source's objects failed the integrity checks a push must pass.",
  too_large: "The source's answer was larger than an import accepts.",
  name_taken: 'A repository of that name was created while the import ran.',
  interrupted: 'The server running the import stopped several times while it ran, so it was set aside.',
  failed: 'The import failed.',
};

/** "6h", "90m", "45s": a duration in its largest whole unit. */
export function shortDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s > 0 && s % 86400 === 0) return `${s / 86400}d`;
  if (s > 0 && s % 3600 === 0) return `${s / 3600}h`;
  if (s > 0 && s % 60 === 0) return `${s / 60}m`;
  return `${s}s`;
}

/** The one sentence for a failure code (the timeout names IMPORT_TIMEOUT's value). */
export function failureReason(code: FailureCode, config: Pick<Config, 'importTimeoutMs'>): string {
  return code === 'timeout' ? `Timed out after ${shortDuration(config.importTimeoutMs)}.` : REASONS[code];
}

const GIT_KINDS: Partial<Record<string, FailureCode>> = {
  auth_failed: 'auth_failed',
  forbidden: 'forbidden',
  not_found: 'not_found',
  unreachable: 'unreachable',
  redirect: 'redirect',
  stalled: 'stalled',
  connection_broken: 'connection_broken',
  fsck_failed: 'integrity',
  too_large: 'too_large',
};

function classify(err: unknown, timedOut: boolean): FailureCode {
  if (timedOut) return 'timeout';
  if (err instanceof HostPolicyError) return 'blocked';
  if (err instanceof StallError) return 'stalled';
  if (err instanceof GitRunError) return GIT_KINDS[err.failure.kind] ?? 'failed';
  if (err instanceof FinalizeError) return 'name_taken';
  const code = errorCode(err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ECONNREFUSED' || code === 'EHOSTUNREACH') return 'unreachable';
  return 'failed';
}

/** Describes why a run failed, in words safe to show: every message is scrubbed of the job's credentials. */
export function describeFailure(config: Config, err: unknown, timedOut: boolean, credentials: Credentials | null): ImportFailure {
  const code = classify(err, timedOut);
  let message: string;
  if (timedOut) message = `timed out after ${Math.round(config.importTimeoutMs / 1000)}s (IMPORT_TIMEOUT)`;
  else if (err instanceof HostPolicyError)
    message = `the source address is blocked by the host policy (IMPORT_ALLOWED_HOSTS): ${err.explain('IMPORT_ALLOWED_HOSTS')}`;
  else if (err instanceof GitRunError || err instanceof FinalizeError) message = err.message;
  else if (err instanceof GitAbortedError) message = 'stopped';
  else message = scrubSecrets(String((err as Error)?.message ?? err), credentials).slice(0, 1000);
  return { code, reason: failureReason(code, config), message };
}
