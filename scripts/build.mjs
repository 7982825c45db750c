// Bundles src/ into dist/ with esbuild, as CommonJS: Node loads a CommonJS file synchronously,
// and measured here a single CommonJS bundle answers a lookup ~10 ms sooner than the same code as
// ES modules split into per-command chunks (Node 20's ES module loader reads each file through
// fs/promises). The source stays ES modules and TypeScript; conf and @inquirer/password (ES
// modules, loaded only by the commands that write config or prompt) stay outside, reached with
// import().
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
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

// @noble/hashes (SHA-256 of the cache and meter keys, src/util/sha256.ts) reaches for Node's
// crypto module only for its random bytes, which imaging never asks it for; under the "node"
// condition its utils import node:crypto at load, the ~6 ms of every lookup that the package is
// there to save. Give it a stand-in with no crypto object (its randomBytes would then throw; the
// bundles never include it: nothing of imaging calls it).
const nobleWithoutNodeCrypto = {
  name: 'noble-without-node-crypto',
  setup(b) {
    b.onResolve({ filter: /^@noble\/hashes\/crypto$/ }, () => ({ path: 'noble-crypto', namespace: 'noble' }));
    b.onLoad({ filter: /.*/, namespace: 'noble' }, () => ({
      contents: 'export const crypto = undefined;',
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
  // https-proxy-agent too: loaded only when a proxy variable is set (src/api/proxy.ts); bundled, it
  // added ~20 KB to every bundle that a lookup reads.
  external: ['conf', '@inquirer/password', 'https-proxy-agent'],
  define: { __IMAGING_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
  plugins: [lazyChildProcess, nobleWithoutNodeCrypto],
};

// The emulator (src/emulator/, ~50 KB of the minified bundle) runs only under `imaging mock`: it is
// a file of its own, dist/emulator.cjs, required by that command alone. Every other command then
// reads, checks and deserialises that much less: V8's code cache of even the bundle's top level
// holds a stub of every function in it (119 KB with the emulator, 106 KB without; README "Speed").
// It shares no state with the CLI (constants and pure functions only), so its own copies of them
// are harmless; Node's compile cache covers it in the same private folder as the bundle's.
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

// The reference lookups (bin/load-cli.cjs's LOOKUPS) run from dist/lookup.cjs: the same entry with
// the registry's loaders of every other command left out (each becomes a module that throws, never
// reached: a run loads only the invoked command's definition), so esbuild leaves out all the code
// only they use. About half the source, and the code cache of its top level alone is ~64 KB
// instead of ~106 KB (README "Speed").
const { LOOKUPS } = createRequire(import.meta.url)('../bin/load-cli.cjs');
const kept = new Set();
const lookupsOnly = {
  name: 'lookups-only',
  setup(b) {
    b.onResolve({ filter: /^\.\/commands\// }, (args) => {
      if (args.kind !== 'dynamic-import' || !/[\\/]src[\\/]registry\.ts$/.test(args.importer))
        return undefined;
      const m = /^\.\/commands\/reference\/([\w-]+)\.js$/.exec(args.path);
      if (m && LOOKUPS.has(m[1])) {
        kept.add(m[1]);
        return undefined;
      }
      return { path: args.path, namespace: 'left-out' };
    });
    b.onLoad({ filter: /.*/, namespace: 'left-out' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not in dist/lookup.cjs`)});`,
      loader: 'js',
    }));
  },
};
const lookup = await build({
  ...common,
  entryPoints: ['src/main.ts'],
  outfile: 'dist/lookup.cjs',
  plugins: [...common.plugins, lookupsOnly],
  metafile: true,
});
if ([...LOOKUPS].some((c) => !kept.has(c)) || kept.size !== LOOKUPS.size)
  throw new Error(
    `dist/lookup.cjs: LOOKUPS (${[...LOOKUPS]}) are not the registry's reference commands (${[...kept]})`,
  );
if (Object.keys(lookup.metafile.inputs).some((f) => f.startsWith('src/emulator/')))
  throw new Error('dist/lookup.cjs: the emulator was bundled into it');

// bin/load-cli.cjs compiles a bundle through vm.Script (to keep a complete code cache), where
// import() would need an experimental loader: the bundle's import() calls (ES-module-only
// packages, some built-ins) go through a function the loader passes in, or plain import() when
// the bundle is required as usual.
for (const name of ['cli.cjs', 'lookup.cjs']) {
  const file = new URL(`../dist/${name}`, import.meta.url);
  const bundled = readFileSync(file, 'utf8');
  const rewritten = bundled.replace(/\bimport\((?=["'])/g, '__imagingImport(');
  if (/\bimport\(/.test(rewritten)) throw new Error(`dist/${name}: an import() with a computed specifier`);
  const body = `var __imagingImport=typeof __imagingImport=="function"?__imagingImport:s=>import(s);\n${rewritten}`;
  // The bundle's build id, in its first line: the CRC32 of the rest, which names the launcher's code
  // caches (bin/load-cli.cjs), so that a rebuilt bundle never meets an older build's cache. Read
  // there from the bytes it loads anyway, where a CRC32 of the whole file would cost node:zlib.
  const id = crc32(Buffer.from(body, 'utf8')).toString(16).padStart(8, '0');
  writeFileSync(file, `/*imaging-build:${id}*/\n${body}`);
}
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
