import type { JSONSchema } from 'json-schema-to-ts';
import { version } from '../version.ts';
import { DELIVERY_HEADERS, PAYLOAD_SCHEMAS } from '../domain/payloads/schemas/index.ts';
import { answerStatuses } from './mount.ts';
import { ACCESS } from './context.ts';
import { nameOf, route, type Route } from './route.ts';
import { ErrorSchema } from './schemas.ts';

type Json = Record<string, unknown>;

/** What each error status means on this API (SPEC §4). */
const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed JSON, or a body that is not UTF-8 (`bad_request`).',
  401: 'No token, or one that is unknown, expired or revoked (`unauthorized`).',
  403: 'The token is valid but may not do this (`forbidden`).',
  404: 'No such thing, or not visible to the caller (`not_found`).',
  408: 'The body stalled or trickled past its deadline (`request_timeout`).',
  409: 'A conflict with the current state (`conflict`).',
  413: 'The body is over its limit (`payload_too_large`).',
  415: 'The body is not `application/json` (`unsupported_media_type`).',
  422: 'Valid JSON, path or query that breaks the schema or a rule; `details` names every failure (`validation_failed`).',
  429: 'The rate limit is spent; `Retry-After` says for how long (`rate_limited`).',
  500: 'A bug, logged with the request id (`internal`).',
  503: 'Unavailable.',
};

/** Headers the routes set, as documented. */
const HEADER_TEXT: Record<string, string> = {
  Location: 'The API path of what was created.',
  Link: 'The next page, as `<path?…&cursor=N>; rel="next"`, when this page came back full.',
};

/** A copy of a schema with every named sub-schema replaced by a $ref to its component, collecting the components met. */
function withRefs(schema: unknown, components: Map<string, unknown>, isRoot = true): unknown {
  const name = nameOf(schema);
  if (name && !isRoot) {
    if (!components.has(name)) components.set(name, withRefs(schema, components, true));
    return { $ref: `#/components/schemas/${name}` };
  }
  if (Array.isArray(schema)) return schema.map((item) => withRefs(item, components, false));
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withRefs(value, components, false)]));
}

/** A schema as the document holds it: a $ref when it is named, inline otherwise. */
function refOrInline(schema: unknown, components: Map<string, unknown>): unknown {
  return withRefs(schema, components, false);
}

/** The parameters of a route: each path template name, then each query property. */
function parameters(r: Route, components: Map<string, unknown>): Json[] {
  const pathProps = (r.params as { properties?: Json } | undefined)?.properties ?? {};
  const queryProps = (r.query as { properties?: Json } | undefined)?.properties ?? {};
  const inPath = [...r.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: refOrInline(pathProps[name] ?? { type: 'string' }, components),
  }));
  const inQuery = Object.entries(queryProps).map(([name, schema]) => {
    const { description, ...rest } = schema as Json;
    return { name, in: 'query', required: false, ...(description ? { description } : {}), schema: refOrInline(rest, components) };
  });
  return [...inPath, ...inQuery];
}

/** The responses of a route: every status it can answer with, errors as the one SPEC §4 schema. */
function responses(r: Route, components: Map<string, unknown>): Json {
  const out: Json = {};
  for (const status of answerStatuses(r)) {
    const headers: Json = Object.fromEntries((r.headers?.[status] ?? []).map((h) => [h, { description: HEADER_TEXT[h], schema: { type: 'string' } }]));
    if (status === 429) headers['Retry-After'] = { description: 'Seconds until the quota renews.', schema: { type: 'string', pattern: '^[0-9]+$' } };
    const isError = !(status in r.answers);
    const schema = isError ? ErrorSchema : r.answers[status];
    out[String(status)] = {
      description: isError ? ERROR_TEXT[status] : status === 204 ? 'Done; no body.' : status >= 400 ? ERROR_TEXT[status] : 'Success.',
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(schema ? { content: { 'application/json': { schema: refOrInline(schema, components) } } } : {}),
    };
  }
  return out;
}

/** One OpenAPI operation from a declared route. */
function operation(r: Route, components: Map<string, unknown>): Json {
  const params = parameters(r, components);
  return {
    operationId: r.id,
    summary: r.summary,
    description: `Access: ${ACCESS[r.access]}`,
    tags: [r.tag],
    'x-access': r.access,
    security: r.access === 'public' ? [] : [{ bearerAuth: [] }],
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(r.body ? { requestBody: { required: !r.bodyOptional, content: { 'application/json': { schema: refOrInline(r.body, components) } } } } : {}),
    responses: responses(r, components),
  };
}

/** The `webhooks` section: one operation per event type, its payload schema as the request body and the delivery headers as parameters. */
function webhooks(): Json {
  const headers = DELIVERY_HEADERS.map((h) => ({ name: h.name, in: 'header', required: h.always, description: h.description, schema: h.schema }));
  return Object.fromEntries(
    Object.entries(PAYLOAD_SCHEMAS).map(([type, schema]) => [
      type,
      {
        post: {
          operationId: `${type.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase())}Event`,
          summary: `The \`${type}\` delivery`,
          description: (schema as { description?: string }).description,
          tags: ['webhook events'],
          parameters: headers,
          requestBody: { required: true, content: { 'application/json': { schema } } },
          responses: {
            '2XX': { description: 'Delivered. Any other answer, or none within the timeout, is retried on the schedule (docs/webhooks.md).' },
          },
        },
      },
    ]),
  );
}

/** The OpenAPI 3.1 document of the REST API and of the webhook deliveries, built from the route registry and the payload schemas. */
export function openApiDocument(routes: readonly Route[]): Json {
  const components = new Map<string, unknown>([['Error', withRefs(ErrorSchema, new Map(), true)]]);
  const paths: Record<string, Json> = {};
  for (const r of routes) (paths[r.path] ??= {})[r.method] = operation(r, components);
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Wharf',
      version,
      description: 'The REST API of a Wharf server (under `/api/v1`), and the webhook deliveries it sends. Errors are SPEC §4 JSON (`Error`).',
    },
    servers: [{ url: '/api/v1', description: 'On the Wharf server itself (its BASE_URL).' }],
    tags: [...new Set(routes.map((r) => r.tag)), 'webhook events'].map((name) => ({ name })),
    paths,
    webhooks: webhooks(),
    components: {
      schemas: Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An access token (`wharf token create`, or POST /user/tokens).' } },
    },
  };
}

const OpenApiSchema = {
  type: 'object',
  required: ['openapi', 'info', 'paths', 'webhooks', 'components'],
  properties: {
    openapi: { type: 'string', const: '3.1.0' },
    info: { type: 'object' },
    paths: { type: 'object' },
    webhooks: { type: 'object' },
    components: { type: 'object' },
  },
} as const satisfies JSONSchema;

/** GET /openapi.json: this document, built once from `routes()` (the registry, which holds this route too). */
export function openApiRoute(routes: () => readonly Route[]): Route {
  let document: Json | undefined;
  return route({
    id: 'getOpenApi',
    method: 'get',
    path: '/openapi.json',
    summary: 'This OpenAPI 3.1 document: every operation of the API and every webhook delivery',
    tag: 'meta',
    access: 'public',
    answers: { 200: OpenApiSchema },
    handler: (_input, ctx) => {
      ctx.body = document ??= openApiDocument(routes());
    },
  });
}
