// Bundles src/ into dist/ with esbuild, as CommonJS: Node loads a CommonJS file synchronously, in
// one read. The source stays ES modules and TypeScript; conf and @inquirer/password (ES modules,
// loaded only by the commands that write config or prompt) stay outside, reached with import().
//   dist/cli.cjs           the CLI (bin/imaging.cjs calls its main(argv))
//   dist/version.cjs       `imaging --version` reads only this
//   dist/cache-folder.cjs  the private cache folder's checks, for Node's compile cache
//   dist/complete.cjs      a TAB press (`imaging __complete`), with dist/completion.json
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { compileLookupsEagerly } from './eager.mjs';

/** Optional packages the dependencies load in a try, which the tool does not install: stubs. */
const OPTIONAL_ABSENT = {
  'supports-color': './scripts/absent.cjs',
  kerberos: './scripts/absent.cjs',
};

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// Everything in dist/ but the standalone binaries (dist/bin/, npm run package): they take minutes to
// make and do not depend on this build.
const distDir = new URL('../dist/', import.meta.url);
for (const name of existsSync(distDir) ? readdirSync(distDir) : []) {
  if (name !== 'bin') rmSync(new URL(name, distDir), { recursive: true, force: true });
}

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.18',
  minify: process.env.MINIFY !== '0',
  legalComments: 'none',
  external: ['@inquirer/password', '@inquirer/prompts', 'exceljs'],
  define: { __IMAGING_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
};

// https-proxy-agent is loaded only when a proxy variable is set (src/api/proxy.ts): in every bundle it
// added ~20 KB to what a lookup reads, so it is dist/proxy.cjs, built here with its dependencies.
const proxyFile = {
  name: 'proxy-file',
  setup(b) {
    b.onResolve({ filter: /^https-proxy-agent$/ }, () => ({ path: './proxy.cjs', external: true }));
  },
};
await build({ ...common, entryPoints: ['src/main.ts'], outfile: 'dist/cli.cjs', plugins: [proxyFile] });
// The optional packages it tries to load are stubs: Node would look for them in every parent folder.
await build({
  ...common,
  entryPoints: ['https-proxy-agent'],
  outfile: 'dist/proxy.cjs',
  alias: OPTIONAL_ABSENT,
});
// The functions a lookup calls are compiled with the bundle, so that Node's compile cache keeps them
// (scripts/eager.mjs finds them by running lookups against the emulator).
if (common.minify) {
  const bin = fileURLToPath(new URL('../bin/imaging.cjs', import.meta.url));
  await compileLookupsEagerly(fileURLToPath(new URL('../dist/cli.cjs', import.meta.url)), bin);
}
// One non-ASCII character makes V8 hold the whole bundle as two-byte text, which Node's compile
// cache then converts back to UTF-8 to hash at every start. esbuild escapes every other string but
// keeps tagged templates as written: write \u2192 there, not the character.
const nonAscii = /[^\x00-\x7f]/.exec(readFileSync(new URL('../dist/cli.cjs', import.meta.url), 'utf8'));
if (nonAscii)
  throw new Error(
    `build: dist/cli.cjs holds a non-ASCII character near ${JSON.stringify(nonAscii.input.slice(nonAscii.index - 40, nonAscii.index + 10))}`,
  );
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
