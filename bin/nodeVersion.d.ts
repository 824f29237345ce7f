/** The oldest Node Wharf runs on, as [major, minor]. */
export declare const OLDEST_NODE: readonly [number, number];
/** Why `version` (e.g. process.versions.node) cannot run Wharf, in one line; null when it can. */
export declare function unsupportedNode(version: string): string | null;
