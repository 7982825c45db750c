#!/usr/bin/env node
// Tiny launcher: `--version` answers without loading anything else; everything else loads the built CLI.
import module from 'node:module';

// Node 22.1+ keeps compiled code between runs (as npm does); a no-op on Node 20.
module.enableCompileCache?.();

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { VERSION } = await import('../dist/version.js');
  process.stdout.write(`${VERSION}\n`);
} else {
  const { main } = await import('../dist/cli.js');
  process.exitCode = await main(args);
}
