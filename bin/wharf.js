#!/usr/bin/env node
// Wharf is written in TypeScript and run through tsx, so there is no build step.
import { unsupportedNode } from './nodeVersion.js';

const refusal = unsupportedNode(process.versions.node);
if (refusal) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
