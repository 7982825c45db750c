// Bundles src/ into dist/ with esbuild: one small entry per start-up path, and one chunk per
// command so that a command loads only its own code (dynamic import splits). Dependencies are
// bundled too, except the ones only slow paths load, to keep start-up to a few files.
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

await build({
  entryPoints: ['src/cli.ts', 'src/version.ts'],
  outdir: 'dist',
  bundle: true,
  splitting: process.env.SPLIT !== '0',
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  sourcemap: false,
  minify: process.env.MINIFY !== '0',
  keepNames: false,
  legalComments: 'none',
  chunkNames: 'chunks/[name]-[hash]',
  external: ['conf', '@inquirer/password'],
  banner: {
    // Bundled CommonJS dependencies call require(); give ESM output one.
    js: "import { createRequire as __imagingRequire } from 'node:module'; const require = __imagingRequire(import.meta.url);",
  },
  define: { __IMAGING_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});
