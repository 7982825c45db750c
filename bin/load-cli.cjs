'use strict';
// Loads dist/cli.cjs with a V8 code cache taken after a whole run, not only after compiling.
//
// Node's own compile cache (module.enableCompileCache) stores the code V8 compiled before the file
// ran: the top level only. Every function a command calls (commander's parser, the command tree,
// the HTTP client) is then compiled again on every start, ~7 ms of a ~50 ms lookup measured on
// Node 24. Here the bundle is compiled through vm.Script, and after the first run of each command
// the code cache is saved with everything that run compiled; the next runs start with it.
//
// The cache holds compiled code only (no data the command read or printed). It lives in the user's
// cache folder (IMAGING_CACHE_DIR, else XDG_CACHE_HOME/imaging, ~/Library/Caches/imaging or
// %LOCALAPPDATA%\imaging\Cache), created 0700, each file written 0600 under a temporary name and
// renamed into place. Its name carries the Node version and the bundle's size and mtime; V8 itself
// refuses a cache made by another V8 or other flags, and a refused or unreadable cache is simply
// made again. Any failure here falls back to a plain require.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

const FILE = path.join(__dirname, '..', 'dist', 'cli.cjs');

function cacheDir() {
  const env = process.env;
  if (env.IMAGING_CACHE_DIR) return env.IMAGING_CACHE_DIR;
  if (process.platform === 'win32')
    return env.LOCALAPPDATA ? path.join(env.LOCALAPPDATA, 'imaging', 'Cache') : undefined;
  if (process.platform === 'darwin')
    return env.HOME ? path.join(env.HOME, 'Library', 'Caches', 'imaging') : undefined;
  if (env.XDG_CACHE_HOME) return path.join(env.XDG_CACHE_HOME, 'imaging');
  return env.HOME ? path.join(env.HOME, '.cache', 'imaging') : undefined;
}

/** A file name for this Node, this build of the bundle and this command (one cache per command). */
function cacheName(stat, command) {
  const key = /^[a-z0-9-]{1,40}$/.test(command ?? '') ? command : 'other';
  return `cli_${process.version}_${process.arch}_${stat.size}_${Math.floor(stat.mtimeMs)}_${key}.v8cache`;
}

/** The first word that is not an option or a global option's value (as commandTarget in src/commands/globals.ts; test/contract/registry.test.ts checks the list). */
function commandOf(args) {
  const valued = new Set(['--env', '--base-url', '--format', '--timeout']);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') return undefined;
    if (args[i].startsWith('-')) {
      if (valued.has(args[i])) i++;
      continue;
    }
    return args[i];
  }
  return undefined;
}

/**
 * Compiled code is only taken from, and written to, a folder that is ours and that no one else can
 * write to (or one not made yet, which is then made 0700).
 */
function usableFolder(dir) {
  let st;
  try {
    st = fs.statSync(dir);
  } catch (err) {
    return err.code === 'ENOENT';
  }
  if (typeof process.getuid !== 'function') return true;
  return st.uid === process.getuid() && (st.mode & 0o022) === 0;
}

function writeAtomically(dir, name, data) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${name}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(tmp, data, { mode: 0o600 });
    fs.renameSync(tmp, path.join(dir, name));
  } catch {
    try {
      fs.unlinkSync(tmp);
    } catch {}
    return;
  }
  // Caches of older builds of the bundle, for this Node and command, are of no further use.
  const [, version, arch, , , command] = name.split('_');
  for (const other of fs.readdirSync(dir)) {
    const parts = other.split('_');
    if (other !== name && parts[1] === version && parts[2] === arch && parts[5] === command) {
      try {
        fs.unlinkSync(path.join(dir, other));
      } catch {}
    }
  }
}

/** Returns the CLI module's exports, and a function to call once the command has finished. */
module.exports = function loadCli(args) {
  let script;
  let save;
  try {
    const source = fs.readFileSync(FILE, 'utf8');
    const stat = fs.statSync(FILE);
    const home = cacheDir();
    const dir = home && usableFolder(home) ? home : undefined;
    const name = cacheName(stat, commandOf(args));
    let cachedData;
    if (dir) {
      try {
        cachedData = fs.readFileSync(path.join(dir, name));
      } catch {}
    }
    // As Module.wrap, plus the bundle's import() (see scripts/build.mjs), made here where import()
    // is Node's own; it resolves from this folder, in the same node_modules as dist/.
    script = new vm.Script(
      `(function (exports, require, module, __filename, __dirname, __imagingImport) {${source}\n})`,
      { filename: FILE, cachedData },
    );
    if (dir && (!cachedData || script.cachedDataRejected)) {
      save = () => writeAtomically(dir, name, script.createCachedData());
    }
  } catch {
    return { cli: require(FILE), done() {} };
  }
  const mod = { exports: {}, filename: FILE, id: FILE, loaded: false };
  const importer = (specifier) => import(specifier);
  const wrapper = script.runInThisContext();
  wrapper.call(mod.exports, mod.exports, Module.createRequire(FILE), mod, FILE, path.dirname(FILE), importer);
  return {
    cli: mod.exports,
    done() {
      if (!save) return;
      try {
        save();
      } catch {}
    },
  };
};
