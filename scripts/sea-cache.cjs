'use strict';
// The single executable's code cache (scripts/package.mjs), made by the Node build inside it:
//   node sea-cache.cjs CLI_SOURCE OUT_CACHE
// compiles CLI_SOURCE as src/standalone.ts does, runs the lookups of the quick start against an
// emulator (the same CLI, in a child process, so that the emulator's code stays out of the cache),
// then writes V8's code cache of the script: it holds every function the lookups compiled, which
// a cache taken as the file loads does not.
//   node sea-cache.cjs --mock CLI_SOURCE      (the child) the emulator on a free port
const { spawn } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Script } = require('node:vm');

function load(file) {
  const script = new Script(readFileSync(file, 'latin1'), { filename: 'imaging.cjs' });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, require, module, __filename, __dirname);
  return { script, cli: module.exports };
}

async function makeCache(file, out) {
  const home = mkdtempSync(join(tmpdir(), 'imaging-sea-cache-'));
  Object.assign(process.env, {
    IMAGING_CONFIG_DIR: join(home, 'config'),
    IMAGING_CACHE_DIR: join(home, 'cache'),
    NO_COLOR: '1',
  });
  const mock = spawn(process.execPath, [__filename, '--mock', file], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const url = await new Promise((resolve, reject) => {
      mock.stdout.once('data', (d) => resolve(String(d).trim()));
      mock.once('exit', (code) => reject(new Error(`sea-cache: the emulator exited with ${code}`)));
    });
    const { script, cli } = load(file);
    const [write, writeErr] = [process.stdout.write, process.stderr.write];
    process.stdout.write = process.stderr.write = () => true;
    try {
      for (const args of [
        ['cpt', '73721', '--json'],
        ['icd10', 'knee'],
      ]) {
        const code = await cli.main(['--env', 'local', '--base-url', url, '--no-cache', ...args]);
        if (code !== 0) throw new Error(`sea-cache: imaging ${args.join(' ')} exited ${code}`);
      }
    } finally {
      [process.stdout.write, process.stderr.write] = [write, writeErr];
    }
    writeFileSync(out, script.createCachedData());
  } finally {
    mock.kill();
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--mock') {
  void load(process.argv[3]).cli.main(['mock', '--port', '0']);
} else {
  makeCache(process.argv[2], process.argv[3]).then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    },
  );
}
