#!/usr/bin/env node
'use strict';
// Tiny launcher: `--version` answers without loading anything else; everything else loads the
// built CLI (one CommonJS bundle: see scripts/build.mjs for why).
const module_ = require('node:module');

// Node 22.1+ keeps compiled code between runs (as npm does); a no-op on Node 20.
if (typeof module_.enableCompileCache === 'function') module_.enableCompileCache();

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${require('../dist/version.cjs').VERSION}\n`);
} else {
  require('../dist/cli.cjs')
    .main(args)
    .then((code) => {
      process.exitCode = code;
    });
}
