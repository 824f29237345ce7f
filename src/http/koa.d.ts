import 'koa';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body, set by jsonBody(). */
    body?: unknown;
  }
}
