import { statSync } from 'node:fs';
import { join } from 'node:path';

declare const __IMAGING_VERSION__: string | undefined;
declare const __IMAGING_STANDALONE__: boolean | undefined;

/** Replaced at build time (esbuild `define`, and vitest's for tests) so `--version` reads no file. */
export const VERSION: string = typeof __IMAGING_VERSION__ === 'string' ? __IMAGING_VERSION__ : '0.0.0-dev';

/** True in the single-file executable (scripts/package.mjs), which has no files beside it to read. */
export const STANDALONE: boolean = typeof __IMAGING_STANDALONE__ === 'boolean' && __IMAGING_STANDALONE__;

export type BuildKind = 'npm' | 'standalone' | 'source';

/**
 * How this copy was installed: the single executable; a clone (its src/ beside dist/, which the npm
 * package leaves out); else the npm package. `dist` is the bundle's folder, if it has one.
 */
export function buildKind(dist: string | undefined): BuildKind {
  if (STANDALONE) return 'standalone';
  if (!dist) return 'source';
  return statSync(join(dist, '..', 'src'), { throwIfNoEntry: false })?.isDirectory() ? 'source' : 'npm';
}

/** `imaging --version`: one line, version first, then the build and the Node inside. */
export function versionLine(dist: string | undefined): string {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  return `${VERSION} (${buildKind(dist)}, Node ${process.version}, ${platform}-${process.arch})`;
}

export function userAgent(): string {
  return `imaging/${VERSION} (partner-imaging-cli; node ${process.version}; ${process.platform})`;
}
