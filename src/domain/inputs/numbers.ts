/** Largest value of the 32-bit integer columns (ids, issue numbers): Postgres refuses to compare with more. */
export const MAX_INT = 2147483647;
