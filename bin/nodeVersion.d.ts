/** The oldest major version Wharf runs on. */
export declare const OLDEST_NODE_MAJOR: number;
/** Why `version` (e.g. process.versions.node) cannot run Wharf, in one line; null when it can. */
export declare function unsupportedNode(version: string): string | null;
