// One Chromium for a whole suite run (scripts/test.js starts this and names it to the test
// files in WHARF_TEST_BROWSER): each web UI test connects to it and works in contexts of
// its own, closed when the test ends, instead of launching and closing a Chromium of its
// own (about 1-1.5 s each here, 56 launches a run). Prints the server's WebSocket address
// on its first line; closes Chromium and exits when its stdin ends.
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.ts';

const server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
process.stdout.write(`${server.wsEndpoint()}\n`);
process.stdin.resume();
process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
