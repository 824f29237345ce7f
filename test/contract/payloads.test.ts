import fs from 'node:fs';
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { DELIVERY_HEADERS, PAYLOAD_SCHEMAS } from '../../src/domain/payloads/schemas/index.ts';
import { EVENT_TYPES } from '../../src/events/types.ts';
import { everyEvent } from './scenario.ts';

// The dialect OpenAPI 3.1 uses; strict, so a misspelt keyword in a schema is an error, not a no-op.
const ajv = new Ajv2020.default({ strict: true, allErrors: true, allowUnionTypes: true });
addFormats.default(ajv);
const validators = Object.fromEntries(Object.entries(PAYLOAD_SCHEMAS).map(([type, schema]) => [type, ajv.compile(schema)]));
const headerValidators = new Map(DELIVERY_HEADERS.map((h) => [h.name.toLowerCase(), ajv.compile(h.schema)]));

/** Headers of the HTTP transport itself, not of the webhook contract. */
const TRANSPORT = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive']);

/** A short name for what a payload shows, e.g. `push:tag deleted` or `pull_request:closed merged`. */
function label(body: any): string {
  if (body.event === 'push') {
    const kind = body.ref.startsWith('refs/tags/') ? 'tag' : 'branch';
    return `push:${kind} ${body.created ? 'created' : body.deleted ? 'deleted' : body.forced ? 'forced' : 'updated'}`;
  }
  if (body.event === 'pull_request' && body.action === 'closed') return `pull_request:closed${body.pull_request.merged ? ' merged' : ''}`;
  if (body.event === 'pipeline') return `pipeline:${body.action} ${body.pipeline.previous_status ?? 'new'}→${body.pipeline.status}`;
  return body.action ? `${body.event}:${body.action}` : body.event;
}

/**
 * Checks that the schema pins the body down: adding a field to any object of it, or
 * removing any field, makes it invalid. Returns the mutations the schema let through.
 */
function looseSpots(check: (v: unknown) => boolean, body: unknown): string[] {
  const loose: string[] = [];
  const visit = (node: unknown, at: (string | number)[]) => {
    if (Array.isArray(node)) return node.forEach((item, i) => visit(item, [...at, i]));
    if (node === null || typeof node !== 'object') return;
    const mutate = (change: (target: any) => void, what: string) => {
      const copy = structuredClone(body) as any;
      change(at.reduce((o, k) => o[k], copy));
      if (check(copy)) loose.push(`${what} at /${at.join('/')}`);
    };
    mutate((o) => (o.unexpected_field = 1), 'an added field');
    for (const key of Object.keys(node)) {
      mutate((o) => delete o[key], `dropping ${key}`);
      visit((node as any)[key], [...at, key]);
    }
  };
  visit(body, []);
  return loose;
}

t.test('a schema for every event type, each valid draft 2020-12', async (t) => {
  t.same(Object.keys(PAYLOAD_SCHEMAS).sort(), [...EVENT_TYPES, 'ping'].sort(), 'one schema per event type and ping, no more');
  for (const [type, schema] of Object.entries(PAYLOAD_SCHEMAS)) {
    t.equal(schema.properties.event.const, type, `${type}: the event field is pinned to its type`);
    t.equal(schema.additionalProperties, false, `${type}: closed`);
  }
});

t.test('every delivery of every event type is exactly its schema, with exactly the documented headers', async (t) => {
  const s = await everyEvent(t);
  const failures: string[] = [];
  const examples: Record<string, { headers: Record<string, unknown>; body: unknown }> = {};
  const seen = new Set<string>();
  for (const r of s.received) {
    const body = JSON.parse(r.body.toString('utf8'));
    const name = label(body);
    const where = `${name} (delivery ${r.guid} to hook ${r.hookId})`;
    seen.add(name);
    if (body.event !== r.event) failures.push(`${where}: body event ${body.event} under header ${r.event}`);
    const check = validators[r.event];
    if (!check) failures.push(`${where}: no schema for ${r.event}`);
    else if (!check(body)) failures.push(`${where}: ${ajv.errorsText(check.errors)}`);
    else for (const spot of looseSpots(check, body)) failures.push(`${where}: the schema allows ${spot}`);

    const isStandard = r.hookId === s.standard.id;
    const expected = DELIVERY_HEADERS.filter((h) => h.always || (h.when === 'whsec' && isStandard)).map((h) => h.name.toLowerCase());
    const sent = Object.keys(r.headers).filter((h) => !TRANSPORT.has(h));
    if (sent.sort().join() !== expected.sort().join()) failures.push(`${where}: headers ${sent.join(', ')}, documented ${expected.join(', ')}`);
    for (const h of sent) {
      const checkHeader = headerValidators.get(h);
      if (checkHeader && !checkHeader(r.headers[h])) failures.push(`${where}: header ${h}: ${r.headers[h]} ${ajv.errorsText(checkHeader.errors)}`);
    }
    if (!r.signatureOk) failures.push(`${where}: X-Service-Signature does not verify`);
    if (r.standardOk !== (isStandard ? true : null)) failures.push(`${where}: Standard Webhooks signature ${r.standardOk}`);
    if (isStandard && !examples[name]) examples[name] = { headers: r.headers, body };
  }
  t.same(failures, [], 'every body valid and pinned down, every header as documented');
  const wanted = [
    'ping',
    'push:branch created',
    'push:branch updated',
    'push:branch forced',
    'push:branch deleted',
    'push:tag created',
    'push:tag forced',
    'push:tag deleted',
    'issue:opened',
    'issue:edited',
    'issue:closed',
    'issue:reopened',
    'comment:created',
    'comment:edited',
    'comment:deleted',
    'pull_request:opened',
    'pull_request:edited',
    'pull_request:synchronize',
    'pull_request:closed',
    'pull_request:reopened',
    'pull_request:closed merged',
    'release:published',
    'pipeline:status_changed new→queued',
    'pipeline:status_changed queued→running',
    'pipeline:status_changed running→success',
    'agent:performed',
  ];
  t.same([...seen].sort(), wanted.sort(), 'every event type and action really happened and was delivered');
  t.ok(s.received.length >= 2 * wanted.length, `${s.received.length} deliveries checked`);
  // Examples for docs/webhooks.md, captured from real deliveries: CAPTURE_PAYLOADS=file.json.
  if (process.env.CAPTURE_PAYLOADS) fs.writeFileSync(process.env.CAPTURE_PAYLOADS, JSON.stringify(examples, null, 2));
});
