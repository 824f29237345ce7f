/** Raised by domain operations when what they would create already exists; rendered as 409. */
export class AlreadyExistsError extends Error {}
