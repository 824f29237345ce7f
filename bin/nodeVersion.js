// The Node.js versions Wharf runs on: 24 (active LTS) and 22 (maintenance LTS), and
// newer. Plain JavaScript, checked by bin/wharf.js before anything else is loaded, so an
// older Node gets one line instead of a stack trace from whatever fails first.

/** The oldest major version Wharf runs on. */
export const OLDEST_NODE_MAJOR = 22;

/** Why `version` (e.g. process.versions.node) cannot run Wharf, in one line; null when it can. */
export function unsupportedNode(version) {
  const major = Number(String(version).split('.')[0]);
  if (major >= OLDEST_NODE_MAJOR) return null;
  return `wharf: Node.js ${version} is not supported: run Wharf on Node.js 24 or 22 (LTS)`;
}
