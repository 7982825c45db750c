#!/usr/bin/env node
'use strict';
// Runs the CLI bundle (scripts/build.mjs). `--version` and a TAB press (`imaging __complete`, sent
// by the completion scripts) are answered from small files of their own, without the bundle.
const path = require('node:path');

const args = process.argv.slice(2);
const dist = path.join(__dirname, '..', 'dist');
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${require('../dist/version.cjs').versionLine(dist)}\n`);
} else if (args[0] === '__complete') {
  require('../dist/complete.cjs').answer(args.slice(1), dist, (s) => process.stdout.write(s));
} else {
  // Node's compile cache (Node 22.1+), only in the user's private cache folder: a code cache is
  // code that runs as the user, so never in a folder another user could write to. Node's own
  // NODE_DISABLE_COMPILE_CACHE turns it off, and then no folder is made for it.
  const { enableCompileCache } = require('node:module');
  if (enableCompileCache && !process.env.NODE_DISABLE_COMPILE_CACHE) {
    const folder = require('../dist/cache-folder.cjs').privateFolder(process.env, true, 'compile-cache');
    if (folder.dir) enableCompileCache(folder.dir);
  }
  require('../dist/cli.cjs')
    .main(args)
    .then((code) => {
      process.exitCode = code;
    });
}
