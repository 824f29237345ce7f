// The Node.js versions Wharf runs on: 24 (active LTS) and 22 (maintenance LTS) from 22.19
// (what undici 8 needs), and newer. Plain JavaScript, checked by bin/wharf.js before
// anything else is loaded, so an older Node gets one line instead of a stack trace from
// whatever fails first.

/** The oldest Node Wharf runs on, as [major, minor]. */
export const OLDEST_NODE = [22, 19];

/** Why `version` (e.g. process.versions.node) cannot run Wharf, in one line; null when it can. */
export function unsupportedNode(version) {
  const [major, minor] = String(version).split('.').map(Number);
  if (major > OLDEST_NODE[0] || (major === OLDEST_NODE[0] && minor >= OLDEST_NODE[1])) return null;
  return `wharf: Node.js ${version} is not supported: run Wharf on Node.js 24, or 22.19 or newer (LTS)`;
}
