// Bundles src/ into dist/ with esbuild, as CommonJS: Node loads a CommonJS file synchronously, in
// one read. The source stays ES modules and TypeScript; conf and @inquirer/password (ES modules,
// loaded only by the commands that write config or prompt) stay outside, reached with import().
//   dist/cli.cjs           the CLI (bin/imaging.cjs calls its main(argv))
//   dist/emulator.cjs      `imaging mock` alone requires it
//   dist/version.cjs       `imaging --version` reads only this
//   dist/cache-folder.cjs  the private cache folder's checks, for Node's compile cache
//   dist/complete.cjs      a TAB press (`imaging __complete`), with dist/completion.json
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

// commander requires node:child_process at load, only to run executable subcommands (which this
// CLI has none of): give it a stand-in that requires the real module only if it is ever called.
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

// The emulator runs only under `imaging mock`: a file of its own, so that no other command reads
// it. It shares no state with the CLI (constants and pure functions only).
const emulatorApart = {
  name: 'emulator-apart',
  setup(b) {
    b.onResolve({ filter: /[\\/]emulator[\\/](server|faults)\.js$/ }, (args) =>
      /[\\/]src[\\/]commands[\\/]mock\.ts$/.test(args.importer)
        ? { path: 'emulator', namespace: 'emulator-apart' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'emulator-apart' }, () => ({
      contents: "module.exports = require('./emulator.cjs');",
      loader: 'js',
    }));
    b.onResolve({ filter: /^\.\/emulator\.cjs$/ }, (args) =>
      args.namespace === 'emulator-apart' ? { path: './emulator.cjs', external: true } : undefined,
    );
  },
};

const cli = await build({
  ...common,
  entryPoints: ['src/main.ts'],
  outfile: 'dist/cli.cjs',
  plugins: [...common.plugins, emulatorApart],
  metafile: true,
});
if (Object.keys(cli.metafile.inputs).some((f) => f.startsWith('src/emulator/')))
  throw new Error('dist/cli.cjs: the emulator was bundled into the CLI');
await build({
  ...common,
  stdin: {
    contents: "export * from './src/emulator/server.ts';\nexport * from './src/emulator/faults.ts';\n",
    resolveDir: fileURLToPath(new URL('..', import.meta.url)),
    sourcefile: 'emulator-entry.ts',
    loader: 'ts',
  },
  outfile: 'dist/emulator.cjs',
});
await build({ ...common, entryPoints: ['src/version.ts'], outfile: 'dist/version.cjs' });
await build({ ...common, entryPoints: ['src/cache/folder.ts'], outfile: 'dist/cache-folder.cjs' });

// Shell completion: dist/complete.cjs (the matching logic alone) and dist/completion.json, a table
// of every command's options and arguments taken here from the definitions the parser uses.
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
