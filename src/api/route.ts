import type { Services } from '../services.ts';
import { compileUntyped, compileAnswer, compileStrings, type Checker, type StringsChecker } from '../http/validate.ts';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Access, RouteContext } from './context.ts';

/** HTTP methods the API serves. */
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The value a schema describes, or undefined where the route declares none. */
// The wide schema type (while a route is still being inferred) gives unknown rather than an endless FromSchema.
export type Input<S> = [S] extends [undefined] ? undefined : JSONSchema extends S ? unknown : S extends JSONSchema ? FromSchema<S> : never;

/**
 * The value an answer schema describes, the return type of its presenter: tsc then fails
 * where a presenter and the schema it answers with disagree, not only the answer checks of
 * the tests at run time.
 */
export type Answer<S extends JSONSchema> = FromSchema<S>;

/** What a handler is given: the path parameters, query and body, each checked and typed by its schema, and what `load` loaded. */
export interface RouteInput<P, Q, B, L = undefined> {
  params: Input<P>;
  query: Input<Q>;
  body: Input<B>;
  loaded: L;
}

/** A route declared once as data: its contract (paths, schemas, answers) and its handler. */
export interface RouteSpec<P = undefined, Q = undefined, B = undefined, A extends Access = Access, L = undefined> {
  /** The OpenAPI operationId: stable, camelCase. */
  id: string;
  method: Method;
  /** Under /api/v1, in OpenAPI form: `/repos/{org}/{repo}`. */
  path: string;
  summary: string;
  tag: string;
  access: A;
  /** The 403 message of an `org:owner` or `site:admin` route. */
  denied?: string;
  /** Path parameters; a value its schema refuses is a 404 with `notFound` (no such thing can exist). */
  params?: P;
  notFound?: string;
  /** True for raw path parameters this route is not for: the next route matching the path tries instead. */
  passes?: (raw: Record<string, string>) => boolean;
  /** Loads what the path names (a 404 when it is missing) before the query and body are checked; the handler gets it as `loaded`. */
  load?: (params: Input<P>, ctx: RouteContext<A>, services: Services) => Promise<L>;
  query?: Q;
  /** Checks of the raw query the schema cannot express, reported in the same 422 as the schema's failures. */
  queryCheck?: (raw: Record<string, string | string[] | undefined>) => { path: string; message: string }[];
  body?: B;
  /** Check the body before the path parameters (as ping and retry always have: their body is checked by the middleware before the handler). */
  bodyFirst?: boolean;
  /** A body may be left out: it is then checked as `{}`. */
  bodyOptional?: boolean;
  /** The body's size limit in bytes (default: the JSON limit of SPEC §4). */
  bodyLimit?: number;
  /** Checks the schema cannot express, reported in the same 422 as the schema's failures. */
  bodyCheck?: (body: unknown) => { path: string; message: string }[];
  /** Every success answer: status → body schema (null: no body). */
  answers: Record<number, JSONSchema | null>;
  /** Error statuses this route's own handler can answer, besides those its access rule, input and the rate limit imply. */
  errors?: number[];
  /** Headers the route sets on an answer, by status (documented in OpenAPI). */
  headers?: Record<number, string[]>;
  /** Reads the checked input, calls one domain function, shapes the answer on ctx. */
  handler: (input: RouteInput<P, Q, B, L>, ctx: RouteContext<A>, services: Services) => unknown;
}

/** A declared route, its input types erased: what the registry, the mount and the OpenAPI builder read. */
export type Route = Omit<RouteSpec, 'access' | 'params' | 'query' | 'body' | 'load' | 'handler'> & {
  params?: JSONSchema;
  query?: JSONSchema;
  body?: JSONSchema;
  access: Access;
  load?: (params: never, ctx: never, services: Services) => Promise<unknown>;
  handler: (input: never, ctx: never, services: Services) => unknown;
  /** The route's schemas, each compiled by ajv once, when it first checks a value. */
  compiled: Compiled;
};

/** A route's checkers: path and query (strings read by their schema), body, and each answer (null: no body), each compiled on first use (compileOnUse): only servers that check their answers (tests) pay for those. */
export interface Compiled {
  params?: StringsChecker;
  query?: StringsChecker;
  body?: (value: unknown) => unknown;
  answers: () => Map<number, Checker | null>;
}

/** Declares a route with checkers of its schemas; the handler's input types come from them. */
export function route<
  const P extends JSONSchema | undefined = undefined,
  const Q extends JSONSchema | undefined = undefined,
  const B extends JSONSchema | undefined = undefined,
  const A extends Access = Access,
  L = undefined,
>(spec: RouteSpec<P, Q, B, A, L>): Route {
  const r = spec as unknown as Omit<Route, 'compiled'>;
  const answers = new Map(Object.entries(r.answers).map(([status, schema]) => [Number(status), schema === null ? null : compileAnswer(schema)]));
  const compiled: Compiled = {
    params: r.params === undefined ? undefined : compileStrings(r.params),
    query: r.query === undefined ? undefined : compileStrings(r.query),
    body: r.body === undefined ? undefined : compileUntyped(r.body as object),
    answers: () => answers,
  };
  return { ...r, compiled };
}

const names = new Map<object, string>();

/** Names a schema: the OpenAPI document lists it once under components.schemas and refers to it by $ref. */
export function named<const S extends JSONSchema>(name: string, schema: S): S {
  names.set(schema as object, name);
  return schema;
}

/** The component name of a schema named with named(), if any. */
export function nameOf(schema: unknown): string | undefined {
  return typeof schema === 'object' && schema !== null ? names.get(schema) : undefined;
}
