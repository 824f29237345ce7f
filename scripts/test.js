#!/usr/bin/env node
// Runs the whole suite with tap on one database: SQLite, or Postgres when
// TEST_DATABASE_URL is set. Ends with the failed tests, file and subtest names
// (so the end of a CI log says which), then the line "N passed, N failed".
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const database = process.env.TEST_DATABASE_URL ? 'Postgres' : 'SQLite';
process.stdout.write(`Running the suite on ${database}\n`);
const child = spawn('npx', ['--no-install', 'tap', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });

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
