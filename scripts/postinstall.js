// After `npm install` / `npm ci`: build tap's plugin set (the suite runs TypeScript
// through tsx, not tap's TypeScript plugin). Skipped when dev dependencies are absent.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (existsSync('node_modules/tap/package.json')) {
  const result = spawnSync('npx', ['--no-install', 'tap', 'build'], { stdio: 'inherit' });
  process.exitCode = result.status ?? 1;
}
