// The web UI no longer calls the REST API: its pages call the domain in process with the
// signed-in user. What is left here are the two error types src/ui/errors.ts still names;
// nothing throws ApiError any more, and this file goes once errors.ts stops importing it.

/** One entry of an error's details (SPEC §4): a JSON Pointer and what is wrong there. */
export interface ApiErrorDetail {
  path: string;
  message: string;
}

/** An error with a status, a code and SPEC §4 details (no longer thrown by the UI). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ApiErrorDetail[],
  ) {
    super(message);
  }
}
