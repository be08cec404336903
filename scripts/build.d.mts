/** Types of scripts/build.mjs (used by bin/geo-sync.js and the test suite's global setup). */
export function isBuildFresh(): boolean;
export function build(opts?: { quiet?: boolean }): void;
