#!/usr/bin/env node
'use strict';
// Tiny launcher: `--version` answers without loading anything else; everything else loads the
// built CLI (one CommonJS bundle: see scripts/build.mjs for why).
// Node's compile cache is enabled by bin/load-cli.cjs, only in a folder checked to be private:
// module.enableCompileCache() with no folder uses os.tmpdir()/node-compile-cache, which anyone can
// make first and fill with code that then runs as the user (issue 13).

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${require('../dist/version.cjs').VERSION}\n`);
} else if (args[0] === '__complete') {
  // A TAB press (the scripts of `imaging completion`): answered from the table written at build,
  // without loading the CLI bundle.
  const dist = require('node:path').join(__dirname, '..', 'dist');
  require('../dist/complete.cjs').answer(args.slice(1), dist, (s) => process.stdout.write(s));
} else {
  // Commands that walk every page (`referrals export`, `--all`) allocate a few MB a page, all
  // short-lived. V8 grows its young generation (to 32-64 MB) and its old-generation limit with that
  // throughput: a peak of 120-280 MiB RSS measured. bin/heap-tuning.cjs stops the young generation
  // at 8 MB a semi-space and grows the old one's limit by 10% at a time (README "Speed").
  if (args.includes('export') || args.includes('--all')) require('./heap-tuning.cjs')();
  // The bundle, with Node's compile cache in a private folder (see bin/load-cli.cjs).
  const { cli, done } = require('./load-cli.cjs')(args);
  cli.main(args).then((code) => {
    process.exitCode = code;
    done(code);
  });
}
