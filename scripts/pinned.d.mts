// Types of scripts/pinned.mjs, for the tests that call it.
export const PINS_FILE: string;
export function pinOf(name: string, version: string): { integrity: string; where: string };
export function pinnedTarball(name: string, version: string, cache: string): string;
export function extractFile(tgz: string, path: string, dir: string): string;
