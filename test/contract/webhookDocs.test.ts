import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { DELIVERY_HEADERS, PAYLOAD_SCHEMAS } from '../../src/domain/payloads/schemas/index.ts';
import { waitFor } from '../helpers/wait.ts';
import { everyEvent } from './scenario.ts';

const DOC = fs.readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');

/** The fenced block right after `<!-- <kind>:<name> -->`, by name. */
function blocks(kind: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of DOC.matchAll(new RegExp(`<!-- ${kind}:(\\S+) -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``, 'g'))) found.set(m[1], m[2]);
  return found;
}

/** The table right after `<!-- fields:<name> -->`: each row's first two cells (field path, type). */
function fieldTable(name: string): string[] {
  const start = DOC.indexOf(`<!-- fields:${name} -->\n`);
  if (start < 0) return [];
  const lines = DOC.slice(start).split('\n').slice(3);
  const rows: string[] = [];
  for (const line of lines) {
    if (!line.startsWith('|')) break;
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    rows.push(`${cells[1]} | ${cells[2]}`);
  }
  return rows;
}

/** How the guide writes a schema's type: `string (date-time), or null`, `"open", "closed"`, `array of objects`. */
function typeOf(s: any): string {
  if (s.anyOf) return s.anyOf.map(typeOf).join(' or ');
  if (s.const !== undefined) return `\`"${s.const}"\``;
  const types: string[] = [].concat(s.type ?? []);
  let text = s.enum
    ? s.enum
        .filter((v: unknown) => v !== null)
        .map((v: string) => `\`"${v}"\``)
        .join(', ')
    : types
        .filter((x) => x !== 'null')
        .map((x) => (x === 'array' ? `array of ${s.items.properties ? 'objects' : typeOf(s.items)}` : x))
        .join(' or ');
  if (s.format) text += ` (${s.format})`;
  if (types.includes('null')) text += ', or null';
  return text;
}

/** Every field of a schema as `path | type` rows, nested objects and array items included. */
function schemaRows(s: any, prefix = '', skip = new Set<string>()): string[] {
  return Object.entries<any>(s.properties).flatMap(([key, p]) => {
    if (skip.has(key)) return [];
    const here = `\`${prefix}${key}\` | ${typeOf(p)}`;
    if (p.properties) return [here, ...schemaRows(p, `${prefix}${key}.`)];
    if (p.items?.properties) return [here, ...schemaRows(p.items, `${prefix}${key}[].`)];
    return [here];
  });
}

const COMMON = new Set(['event', 'action', 'repository', 'organization', 'sender']);

t.test('the guide lists exactly the fields of every schema, valid examples and the delivery headers', async (t) => {
  const ajv = new Ajv2020.default({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats.default(ajv);
  const examples = blocks('example');
  for (const [type, schema] of Object.entries(PAYLOAD_SCHEMAS)) {
    t.same(fieldTable(type), schemaRows(schema, '', COMMON), `${type}: the table is the schema's fields and types`);
    const example = examples.get(type);
    t.ok(example, `${type}: an example`);
    const check = ajv.compile(schema);
    t.ok(check(JSON.parse(example ?? 'null')), `${type}: the example is valid: ${ajv.errorsText(check.errors)}`);
  }
  const { repository, organization, sender } = PAYLOAD_SCHEMAS.issue.properties;
  t.same(
    fieldTable('common'),
    ['`event` | string', '`action` | string', ...schemaRows({ properties: { repository, organization, sender } })],
    'the common fields',
  );
  const documented = [...DOC.matchAll(/^\| `([\w-]+)` \| (?:yes|only for a `whsec_` secret|only with `header_style: "github"`) \|/gm)].map((m) => m[1]);
  t.same(
    documented,
    DELIVERY_HEADERS.map((h) => h.name),
    'the header table lists DELIVERY_HEADERS',
  );
});

/** Runs a program with the body on stdin; returns what it printed and its exit code. */
function run(command: string, args: string[], env: Record<string, string>, stdin: Buffer): Promise<{ out: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ out: (out + err).trim(), code }));
    child.stdin.end(stdin);
  });
}

t.test("the guide's verification snippets accept a real delivery and refuse a tampered one", async (t) => {
  const snippets = blocks('snippet');
  t.same([...snippets.keys()].sort(), ['verify-signature.mjs', 'verify-standard.mjs', 'verify_signature.py', 'verify_standard.py']);
  // The snippets as an integrator saves them; node_modules beside them for `standardwebhooks`.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-docs-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.symlinkSync(path.resolve(fileURLToPath(new URL('../../node_modules', import.meta.url))), path.join(dir, 'node_modules'));
  for (const [name, code] of snippets) fs.writeFileSync(path.join(dir, name), code + '\n');

  const s = await everyEvent(t, { only: 'ping' });
  // A delivery with non-ASCII bytes in its body as well as the pings.
  const made = await s.w.api('POST', '/api/v1/repos/acme/app/issues', { body: { title: 'Ünïcode — “quoted” ✓', body: 'Zoë’s report' } });
  t.equal(made.status, 201);
  await waitFor(() => s.received.filter((r) => r.event === 'issue').length === 2, { what: 'the issue deliveries' });

  const programs = (standard: boolean) => [
    ['node', 'verify-signature.mjs'],
    ['python3', 'verify_signature.py'],
    ...(standard
      ? [
          ['node', 'verify-standard.mjs'],
          ['python3', 'verify_standard.py'],
        ]
      : []),
  ];
  for (const r of s.received) {
    const standard = r.hookId === s.standard.id;
    const secret = standard ? s.standard.secret : s.plain.secret;
    const headersFile = path.join(dir, `headers-${r.guid}.json`);
    fs.writeFileSync(headersFile, JSON.stringify(r.headers));
    const tampered = Buffer.from(r.body.toString('utf8').replace('"acme/app"', '"acme/evil"'));
    t.not(tampered.toString(), r.body.toString(), 'the tampered body differs');
    for (const [command, file] of programs(standard)) {
      const what = `${file} on a ${r.event} delivery to the ${standard ? 'whsec_' : 'plain'} webhook`;
      const env = { WEBHOOK_SECRET: secret };
      t.same(await run(command, [path.join(dir, file), headersFile], env, r.body), { out: 'verified', code: 0 }, `${what}: verified`);
      t.same(await run(command, [path.join(dir, file), headersFile], env, tampered), { out: 'refused', code: 1 }, `${what}, body tampered: refused`);
    }
  }
});
