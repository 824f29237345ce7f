#!/usr/bin/env node
// Runs the whole suite with tap (at least two files at a time) on one database: SQLite, or Postgres when
// TEST_DATABASE_URL is set. Ends with the failed tests, file and subtest names
// (so the end of a CI log says which), then the line "N passed, N failed". When Swift is
// installed (scripts/swift.sh install) it starts one for the whole run, on free ports, and
// names it in WHARF_TEST_SWIFT for the S3 test files (test/helpers/swift.ts), stopping it at
// the end: one start (8–40 s) instead of one per file.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const database = process.env.TEST_DATABASE_URL ? 'Postgres' : 'SQLite';
process.stdout.write(`Running the suite on ${database}\n`);
const swift = startSwift();
const browser = await startBrowser();
// tap runs one file at a time on 2 cores (its default is the cores less one); most files
// wait on git, servers and timers, so two at a time take 10 minutes where one took 18.
const jobs = args.some((a) => a.startsWith('--jobs') || /^-j\d*$/.test(a)) ? [] : [`--jobs=${Math.max(2, os.availableParallelism())}`];
const child = spawn('npx', ['--no-install', 'tap', ...jobs, ...args], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, ...(swift ? { WHARF_TEST_SWIFT: swift.dir } : {}), ...(browser ? { WHARF_TEST_BROWSER: browser.endpoint } : {}) },
});

// The TAP stream: "# Subtest: name" opens a test at an indentation; "not ok N - name"
// closes a failed one. The path of open subtests names each failure.
let tail = '';
let pending = '';
const open = [];
const failures = [];
const readLine = (line) => {
  const indent = line.length - line.trimStart().length;
  const subtest = /^\s*# Subtest: (.*)$/.exec(line);
  if (subtest) {
    while (open.length > 0 && open[open.length - 1].indent >= indent) open.pop();
    open.push({ indent, name: subtest[1] });
    return;
  }
  const failed = /^\s*not ok \d+ - (.*?)(?: # .*)?$/.exec(line);
  if (failed) {
    const path = open.filter((o) => o.indent < indent).map((o) => o.name);
    failures.push([...path, failed[1]].join(' > '));
  }
};
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk).slice(-4096);
  const lines = (pending + chunk).split('\n');
  pending = lines.pop() ?? '';
  lines.forEach(readLine);
});
child.on('close', (code, signal) => {
  swift?.stop();
  browser?.stop();
  if (pending) readLine(pending);
  // tap's summary line looks like "# { total: 12, pass: 11, fail: 1 }".
  const summary = /#\s*\{([^}]*)\}\s*$/m.exec(
    tail
      .split('\n')
      .filter((l) => l.includes('total:'))
      .pop() ?? '',
  );
  const count = (name) => Number(new RegExp(`${name}:\\s*(\\d+)`).exec(summary?.[1] ?? '')?.[1] ?? 0);
  const failed = count('fail') + (code !== 0 && count('fail') === 0 ? 1 : 0);
  // Only the innermost failures: a failed assertion also fails its subtest and file.
  const innermost = failures.filter((f) => !failures.some((g) => g !== f && g.startsWith(`${f} > `)));
  if (innermost.length > 0) {
    process.stdout.write(`Failed on ${database}:\n`);
    for (const f of innermost.slice(0, 40)) process.stdout.write(`  not ok: ${f}\n`);
  }
  process.stdout.write(`${count('pass')} passed, ${failed} failed\n`);
  process.exitCode = code ?? (signal ? 1 : 0);
});

/** Starts the run's Swift when it is installed and no test Swift is named already; null otherwise. */
function startSwift() {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'swift.sh');
  if (process.env.WHARF_TEST_SWIFT || spawnSync(script, ['installed']).status !== 0) return null;
  // Test files named on the command line (the smoke run, a file being worked on) start one only if one of them uses it.
  const files = args.filter((a) => a.endsWith('.ts'));
  if (files.length > 0 && !files.some((f) => fs.existsSync(f) && fs.readFileSync(f, 'utf8').includes('helpers/swift.ts'))) return null;
  const dir = path.join(os.tmpdir(), `wharf-suite-swift-${randomBytes(6).toString('hex')}`);
  const stop = () => spawnSync(script, ['stop', dir]);
  const started = spawnSync(script, ['start', dir], { encoding: 'utf8', env: { ...process.env, SWIFT_PORT_BASE: 'auto' } });
  if (started.status !== 0) {
    // The S3 files then start a Swift each, as they do without this runner.
    process.stdout.write(`# could not start a Swift for the run (${started.stderr.trim().split('\n').pop()}); the S3 files start their own\n`);
    stop();
    return null;
  }
  process.once('exit', stop);
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));
  return { dir, stop };
}

/**
 * Starts the run's Chromium (test/ui/browserServer.ts) when Chromium is installed and the
 * run has web UI tests, and resolves to its address; null otherwise (each UI test then
 * launches its own).
 */
async function startBrowser() {
  const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (process.env.WHARF_TEST_BROWSER || !fs.existsSync(chromiumPath)) return null;
  const files = args.filter((a) => a.endsWith('.ts'));
  if (files.length > 0 && !files.some((f) => f.startsWith('test/ui/') || f === 'test/ui')) return null;
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const server = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test/ui/browserServer.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
  // A Chromium that dies mid-run fails the UI tests that use it; it never takes this runner down.
  server.on('error', () => {});
  server.stdin.on('error', () => {});
  const endpoint = await new Promise((resolve) => {
    let out = '';
    server.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(out.split('\n')[0].trim());
    });
    server.on('exit', () => resolve(null));
    server.on('error', () => resolve(null));
  });
  if (!endpoint) {
    process.stdout.write('# could not start a Chromium for the run; the web UI tests launch their own\n');
    return null;
  }
  const stop = () => server.stdin.end();
  process.once('exit', () => server.kill());
  return { endpoint, stop };
}
