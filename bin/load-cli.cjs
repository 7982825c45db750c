'use strict';
// Loads dist/cli.cjs, with Node's compile cache kept in a private folder that only this user (or
// root) could have written to (issue 13).
//
// A code cache is executable: whoever can write it runs code as the user. This launcher used to keep
// its own V8 code cache per command (vm.Script cachedData, checked by V8 for little more than its
// header and the source's length: a damaged file crashed every run, a planted one ran another
// user's code), and Node's compile cache in os.tmpdir()/node-compile-cache, which anyone can make
// first. Both are gone. What is left is Node's own compile cache (Node 22.1+; ~6 ms of a lookup on
// Node 24), which checks a CRC32 of each entry and of the source it was made from and remakes a
// damaged or stale one, and only in a folder checked as ssh's StrictModes would:
//  - the folder is IMAGING_CACHE_DIR, $XDG_CACHE_HOME/imaging or ~/.cache/imaging (macOS
//    ~/Library/Caches/imaging), plus `compile-cache`; a relative value is ignored (as XDG says);
//    none on Windows (its ACLs are not checked here) or when the home folder (or the folder above
//    IMAGING_CACHE_DIR / XDG_CACHE_HOME) is missing: that is never created;
//  - the real path of that starting folder and every folder above it are directories owned by root
//    or the user and not writable by group or others, except a sticky one (/tmp) whose next
//    component is owned by the user;
//  - the levels below are made one at a time (mkdir 0700, never recursive) and each then checked
//    with lstat: a directory, not a symlink, owned by the user (or root above the last), not
//    writable by group or others; the last one owned by the user with mode 0700 exactly.
// No cache for the commands run with the heap tuning (bin/imaging.cjs): V8 would refuse it under
// other flags and Node would rewrite it on every run. Any doubt or error: no cache, same result.
const fs = require('node:fs');
const path = require('node:path');

/** The starting folder (must exist, never created) and the levels below it we may create. */
function cacheLocation(env) {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return undefined;
  const abs = (p) => (p && path.isAbsolute(p) ? path.normalize(p) : undefined);
  const split = (p, ...below) => ({ start: path.dirname(p), levels: [path.basename(p), ...below] });
  if (env.IMAGING_CACHE_DIR !== undefined && env.IMAGING_CACHE_DIR !== '') {
    const dir = abs(env.IMAGING_CACHE_DIR);
    return dir && dir !== '/' ? split(dir, 'compile-cache') : undefined;
  }
  const home = abs(env.HOME);
  if (process.platform === 'darwin')
    return home ? { start: home, levels: ['Library', 'Caches', 'imaging', 'compile-cache'] } : undefined;
  const xdg = abs(env.XDG_CACHE_HOME);
  if (xdg && xdg !== '/') return split(xdg, 'imaging', 'compile-cache');
  return home ? { start: home, levels: ['.cache', 'imaging', 'compile-cache'] } : undefined;
}

const STICKY = 0o1000;

/** The private cache folder, made if need be, or undefined when it cannot be trusted. */
function privateFolder(env) {
  const where = cacheLocation(env);
  if (!where) return undefined;
  const uid = process.getuid();
  const trusted = (st) => st.uid === 0 || st.uid === uid;
  // The starting folder: its real path, and every folder from / down to it.
  const start = fs.realpathSync(where.start);
  const parts = start.split(path.sep).filter(Boolean);
  let dir = path.sep;
  let parent = fs.lstatSync(dir);
  if (!parent.isDirectory() || !trusted(parent)) return undefined;
  const next = [...parts, ...where.levels];
  for (let i = 0; i < next.length; i++) {
    const child = path.join(dir, next[i]);
    const last = i === next.length - 1;
    let st;
    try {
      st = fs.lstatSync(child);
    } catch (err) {
      if (err.code !== 'ENOENT' || i < parts.length) return undefined;
      try {
        fs.mkdirSync(child, { mode: 0o700 });
      } catch (mkErr) {
        if (mkErr.code !== 'EEXIST') return undefined;
      }
      st = fs.lstatSync(child);
    }
    if (st.isSymbolicLink() || !st.isDirectory()) return undefined;
    // A folder others can write to is acceptable above this one only if sticky and this one is ours.
    if (parent.mode & 0o022 && !(parent.mode & STICKY && st.uid === uid)) return undefined;
    if (!trusted(st)) return undefined;
    if (last && (st.uid !== uid || (st.mode & 0o7777) !== 0o700)) return undefined;
    dir = child;
    parent = st;
  }
  return dir;
}

/** Returns the CLI module's exports, and a function to call once the command has finished. */
module.exports = function loadCli(args) {
  // The same test as bin/imaging.cjs for the heap tuning: those commands get no compile cache.
  const tuned = args.includes('export') || args.includes('--all');
  const Module = require('node:module');
  if (!tuned && typeof Module.enableCompileCache === 'function') {
    try {
      const dir = privateFolder(process.env);
      if (dir) Module.enableCompileCache(dir);
    } catch {}
  }
  return { cli: require('../dist/cli.cjs'), done() {} };
};
