// Bundles src/ into dist/ with esbuild, as CommonJS: Node loads a CommonJS file synchronously,
// and measured here a single CommonJS bundle answers a lookup ~10 ms sooner than the same code as
// ES modules split into per-command chunks (Node 20's ES module loader reads each file through
// fs/promises). The source stays ES modules and TypeScript; conf and @inquirer/password (ES
// modules, loaded only by the commands that write config or prompt) stay outside, reached with
// import().
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

// commander requires node:child_process at load, only to run executable subcommands (which this
// CLI has none of); loading it pulls in net, dgram and child_process on every start. Give commander
// a stand-in that requires the real module only if it is ever called.
const lazyChildProcess = {
  name: 'lazy-child-process-for-commander',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer)
        ? { path: 'commander-child-process', namespace: 'lazy' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy' }, () => ({
      contents: "module.exports = { spawn: (...a) => require('node:child_process').spawn(...a) };",
      loader: 'js',
    }));
  },
};

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.18',
  minify: process.env.MINIFY !== '0',
  legalComments: 'none',
  external: ['conf', '@inquirer/password'],
  define: { __IMAGING_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
  plugins: [lazyChildProcess],
};

await build({ ...common, entryPoints: ['src/main.ts'], outfile: 'dist/cli.cjs' });
// bin/load-cli.cjs compiles the bundle through vm.Script (to keep a complete code cache), where
// import() would need an experimental loader: the bundle's import() calls (ES-module-only
// packages, some built-ins) go through a function the loader passes in, or plain import() when
// the bundle is required as usual.
const cliFile = new URL('../dist/cli.cjs', import.meta.url);
const bundled = readFileSync(cliFile, 'utf8');
const rewritten = bundled.replace(/\bimport\((?=["'])/g, '__imagingImport(');
if (/\bimport\(/.test(rewritten)) throw new Error('dist/cli.cjs: an import() with a computed specifier');
writeFileSync(
  cliFile,
  `var __imagingImport=typeof __imagingImport=="function"?__imagingImport:s=>import(s);\n${rewritten}`,
);
// `imaging --version` reads only this.
await build({ ...common, entryPoints: ['src/version.ts'], outfile: 'dist/version.cjs' });

// Shell completion: a TAB press runs `imaging __complete …`, which bin/imaging.cjs answers from
// dist/complete.cjs (the matching logic alone) and dist/completion.json, a table of every command's
// options and arguments taken here from the same definitions the parser uses, so that no command
// file is loaded then.
await build({ ...common, entryPoints: ['src/completion/entry.ts'], outfile: 'dist/complete.cjs' });
const tableFile = new URL('../dist/.completion-table.cjs', import.meta.url);
await build({ ...common, entryPoints: ['src/completion/table.ts'], outfile: fileURLToPath(tableFile) });
try {
  const { buildCompletionTable } = createRequire(import.meta.url)(fileURLToPath(tableFile));
  writeFileSync(
    new URL('../dist/completion.json', import.meta.url),
    `${JSON.stringify(await buildCompletionTable())}\n`,
  );
} finally {
  rmSync(tableFile, { force: true });
}
