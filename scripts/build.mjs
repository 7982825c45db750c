// Bundles src/ into dist/ with esbuild, as CommonJS: Node loads a CommonJS file synchronously, in
// one read. The source stays ES modules and TypeScript; conf and @inquirer/password (ES modules,
// loaded only by the commands that write config or prompt) stay outside, reached with import().
//   dist/cli.cjs           the CLI (bin/imaging.cjs calls its main(argv))
//   dist/version.cjs       `imaging --version` reads only this
//   dist/cache-folder.cjs  the private cache folder's checks, for Node's compile cache
//   dist/complete.cjs      a TAB press (`imaging __complete`), with dist/completion.json
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.18',
  minify: process.env.MINIFY !== '0',
  legalComments: 'none',
  // https-proxy-agent too: loaded only when a proxy variable is set (src/api/proxy.ts); bundled, it
  // added ~20 KB to every bundle that a lookup reads.
  external: ['@inquirer/password', 'https-proxy-agent'],
  define: { __IMAGING_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
};

await build({ ...common, entryPoints: ['src/main.ts'], outfile: 'dist/cli.cjs' });
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
