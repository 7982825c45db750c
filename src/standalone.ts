import { answerFrom } from './completion/entry.js';
import type { CompletionTable } from './completion/table.js';
import { versionLine } from './version.js';

// The single executable's entry (scripts/package.mjs): the whole CLI in one CommonJS file, with the
// completion table inside (no file beside the binary is read). `--version` and a TAB press answer
// before the CLI's modules are initialised: main.js is reached by import(), which esbuild inlines
// as a lazy initialiser.
declare const __IMAGING_COMPLETION__: CompletionTable;

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${versionLine(undefined)}\n`);
} else if (args[0] === '__complete') {
  answerFrom(__IMAGING_COMPLETION__, args.slice(1), (s) => process.stdout.write(s));
} else {
  void import('./main.js').then(({ main }) =>
    main(args).then((code) => {
      process.exitCode = code;
    }),
  );
}
