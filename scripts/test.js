#!/usr/bin/env node
// Runs the whole suite with tap on one database: SQLite, or Postgres when
// TEST_DATABASE_URL is set. Ends with the line "N passed, N failed".
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const database = process.env.TEST_DATABASE_URL ? 'Postgres' : 'SQLite';
process.stdout.write(`Running the suite on ${database}\n`);
const child = spawn('npx', ['--no-install', 'tap', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
let tail = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk).slice(-4096);
});
child.on('close', (code, signal) => {
  // tap's summary line looks like "# { total: 12, pass: 11, fail: 1 }".
  const summary = /#\s*\{([^}]*)\}\s*$/m.exec(
    tail
      .split('\n')
      .filter((l) => l.includes('total:'))
      .pop() ?? '',
  );
  const count = (name) => Number(new RegExp(`${name}:\\s*(\\d+)`).exec(summary?.[1] ?? '')?.[1] ?? 0);
  const failed = count('fail') + (code !== 0 && count('fail') === 0 ? 1 : 0);
  process.stdout.write(`${count('pass')} passed, ${failed} failed\n`);
  process.exitCode = code ?? (signal ? 1 : 0);
});
