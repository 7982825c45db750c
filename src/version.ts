declare const __IMAGING_VERSION__: string | undefined;

/** Replaced at build time (esbuild `define`, and vitest's for tests) so `--version` reads no file. */
export const VERSION: string = typeof __IMAGING_VERSION__ === 'string' ? __IMAGING_VERSION__ : '0.0.0-dev';

export function userAgent(): string {
  return `imaging/${VERSION} (partner-imaging-cli; node ${process.version}; ${process.platform})`;
}
