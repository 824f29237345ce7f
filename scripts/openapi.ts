// Writes docs/openapi.json from the route registry: `npm run openapi` after changing a route
// or a payload schema. test/contract/openapi.test.ts fails while the copy differs from what
// the server serves at GET /api/v1/openapi.json.
import { writeFileSync } from 'node:fs';
import { API_ROUTES } from '../src/api/index.ts';
import { openApiDocument } from '../src/api/openapi.ts';

const target = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(openApiDocument(API_ROUTES), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
