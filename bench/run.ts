// `npm run bench`: runs every bench/*.bench.ts in name order (or those named on the
// command line) and prints one JSON line per figure. Each figure is a ratio to a
// baseline measured in the same run, or an absolute value with its target.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** One measured figure. */
export interface Figure {
  figure: string;
  value: number;
  unit: string;
  baseline?: number;
  ratio?: number;
  target: string;
  met: boolean;
  [more: string]: unknown;
}

/** A benchmark module's default export: measures and reports figures as it goes. */
export type Bench = (report: (figure: Figure) => void) => Promise<void>;

const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = fs
  .readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
for (const file of files) {
  const bench: Bench = (await import(pathToFileURL(path.join(here, file)).href)).default;
  await bench((figure) => process.stdout.write(`${JSON.stringify({ bench: file.replace('.bench.ts', ''), ...figure })}\n`));
}
