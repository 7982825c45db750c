import { getAsset } from 'node:sea';
import { Script } from 'node:vm';
import { answerFrom } from './completion/entry.js';
import type { CompletionTable } from './completion/table.js';
import { versionLine } from './version.js';

// The single executable's entry (scripts/package.mjs): one CommonJS file that carries the whole CLI
// (src/main.ts with every module inlined, as a function's source text) and the completion table,
// and reads no file beside the binary. `--version`, a TAB press and the keychain helper (run by the
// CLI in a child process) answer without compiling the CLI.
// The CLI is compiled with V8's code cache of a lookup run at build time (the `main.cache` asset),
// which holds the functions that run calls, not only those compiled as the file loads; a binary
// built without it (cross-built) or whose cache V8 refuses compiles the same source.
declare const __IMAGING_COMPLETION__: CompletionTable;
/** `(function (exports, require, module, __filename, __dirname) {…})`: the CLI bundle. */
declare const __IMAGING_CLI__: string;

// At the top level, so that the entry's code cache holds it; in a function compiled on first call
// V8 would scan the megabyte of text again at every start.
const CLI_SOURCE = __IMAGING_CLI__;

interface Cli {
  main(argv: string[]): Promise<number>;
}

function loadCli(): Cli {
  let cachedData: Buffer | undefined;
  try {
    cachedData = Buffer.from(getAsset('main.cache'));
  } catch {
    // no code cache in this build
  }
  const script = new Script(CLI_SOURCE, { filename: 'imaging.cjs', ...(cachedData ? { cachedData } : {}) });
  // For the build's check and docs/speed.md: whether V8 took the code cache.
  if (process.env.IMAGING_CODE_CACHE_REPORT === '1')
    process.stderr.write(
      `code cache: ${!cachedData ? 'none' : script.cachedDataRejected ? 'refused' : 'used'}\n`,
    );
  const module = { exports: {} as Cli };
  script.runInThisContext()(module.exports, require, module, __filename, __dirname);
  return module.exports;
}

// Node says nothing of a library's `Buffer()` (DEP0005) when its caller sits under node_modules; in
// this one file every library looks like ours, so exceljs would warn on every workbook. That one
// warning is dropped, as the npm install drops it; every other warning is kept.
const emitWarning = process.emitWarning;
process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
  const code = typeof rest[0] === 'object' && rest[0] ? (rest[0] as { code?: string }).code : rest[1];
  if (code === 'DEP0005') return;
  return (emitWarning as (...a: unknown[]) => void).call(this, warning, ...rest);
} as typeof process.emitWarning;

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${versionLine(undefined)}\n`);
} else if (args[0] === '__complete') {
  answerFrom(__IMAGING_COMPLETION__, args.slice(1), (s) => process.stdout.write(s));
} else if (args[0] === '__keychain') {
  void import('./config/keychain-child.js').then(({ keychainChild }) => keychainChild(args.slice(1)));
} else {
  void loadCli()
    .main(args)
    .then((code) => {
      process.exitCode = code;
    });
}
