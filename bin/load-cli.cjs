'use strict';
// Loads dist/cli.cjs (dist/lookup.cjs for the reference lookups), with Node's compile cache kept in
// a private folder that only this user (or root) could have written to (issue 13).
//
// A code cache is executable: whoever can write it runs code as the user. This launcher used to keep
// its own V8 code cache per command (vm.Script cachedData, checked by V8 for little more than its
// header and the source's length: a damaged file crashed every run, a planted one ran another
// user's code), and Node's compile cache in os.tmpdir()/node-compile-cache, which anyone can make
// first. Both went; the first is back below, only in the private folder and checked byte by byte.
// Node's own compile cache (Node 22.1+; ~6 ms of a lookup on
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
  // The starting folder: its real path, and every folder from / down to it (realpath(3): the
  // JavaScript realpathSync lstats every component, ~0.2-0.6 ms of each start).
  const start = fs.realpathSync.native(where.start);
  const parts = start.split(path.sep).filter(Boolean);
  let dir = path.sep;
  let parent = fs.lstatSync(dir);
  if (!parent.isDirectory() || !trusted(parent)) return undefined;
  const next = [...parts, ...where.levels];
  for (let i = 0; i < next.length; i++) {
    const child = dir === '/' ? `/${next[i]}` : `${dir}/${next[i]}`; // POSIX only (see cacheLocation)
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

// A V8 code cache of the bundle taken after a whole run (Node's compile cache above keeps only what
// V8 compiled before the file ran: every function a command then calls is compiled again on every
// start, ~8 ms of a lookup on Node 24). One file per command, in the same checked private folder:
//   code-<node version>-<arch>-<command>-<build id of the bundle>.v8
//   header (16 bytes): "IMC3", the length of the source, the length of the V8 data, 0; then the
//   source the cache was made from (the bundle in its wrapper, as V8 compiles it); then the V8
//   data, twice.
// V8 checks little more than a cache's header and the source's length: it runs a cache made from
// another source of that length, and crashes on damaged data. Every byte is checked here before V8
// sees it, by comparison, not by a checksum (node:zlib, for CRC32s, was ~1 ms of every start;
// Buffer.equals is a memcmp, microseconds): the source kept must be the source about to be
// compiled (the bundle just read, in this launcher's wrapper), byte for byte, so an edited,
// replaced or other install's bundle, or another launcher's wrapper, never meets a cache of another
// source (whatever its mtime, inode or build id line says: a review met all three kept by tar and
// cp -p, and one changed the wrapper to the same length);
// and the two copies of the V8 data must be the same, byte for byte: damage to the file lands in
// one copy and not at the same place in the other, and a file cut short or grown fails the lengths.
// Not caught: a file whose two copies were changed alike, which only a deliberate write makes (a
// CRC32 set to match was the same). The build id (the CRC32 of the bundle that scripts/build.mjs
// writes in its first line) names the file, so that a rebuilt bundle's cache replaces older ones.
// The folder being private is what keeps an attacker out (nothing here is a signature); the file is
// opened with O_NOFOLLOW|O_NONBLOCK (no symlink, no FIFO hang) and must be a regular file of ours,
// mode 0600, of bounded size. A new cache is written under a random name opened 'wx' (never follows
// a symlink, never reuses a file) and renamed into place. Any doubt or error: no cache.
const HEADER = 16;
const MAGIC = 0x494d4333; // "IMC3"
const MAX_DATA = 16 * 1024 * 1024;
/** The first line of a bundle (scripts/build.mjs): its build id, 8 hex digits. */
const BUILD_LINE = /^\/\*imaging-build:([0-9a-f]{8})\*\/\n/;
const DIST = path.join(__dirname, '..', 'dist');
/**
 * The reference lookups run from their own bundle, dist/lookup.cjs: the same code as dist/cli.cjs
 * without every other command (scripts/build.mjs), so about half the source to read and check and
 * a smaller code cache to deserialise. Only the invoked command's definition is ever loaded, so a
 * run of one of these never needs another. Each bundle file has its own caches (the build id of the
 * file is in their names), under the same checks.
 */
const LOOKUPS = new Set(['modalities', 'body-parts', 'cpt', 'icd10']);
const WRAP_HEAD = Buffer.from(
  '(function (exports, require, module, __filename, __dirname, __imagingImport) {',
);
const WRAP_TAIL = Buffer.from('\n})');
/** The launcher's copy of the value-taking global options (src/commands/globals.ts), for the key. */
const VALUED = new Set(['--env', '--base-url', '--format', '--timeout', '--fields']);

/**
 * The launcher's copy of the registry's top-level words (src/registry.ts), and commander's `help`
 * (checked against the registry in test/contract/registry.test.ts).
 */
const COMMANDS = new Set([
  'auth',
  'config',
  'cache',
  'law-firms',
  'referrals',
  'webhook',
  'modalities',
  'body-parts',
  'cpt',
  'icd10',
  'api',
  'sso',
  'completion',
  'mock',
  'help',
]);

/**
 * The command word, as commandTarget in src/commands/globals.ts finds it; used to pick the bundle
 * and to name the cache. A word before it that is no command is the value of `--json` (`imaging
 * --json id,status referrals list`: its value is optional, so it is not in VALUED) or a mistake
 * that ends the run with a usage error, which saves nothing: it is passed over, so that no cache
 * is ever named after a field list.
 */
function commandKey(args) {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') break;
    if (a.startsWith('-')) {
      if (VALUED.has(a)) i++;
      continue;
    }
    if (COMMANDS.has(a)) return a;
  }
  return 'other';
}

/** The verified V8 data of a cache file made from `source`, or undefined (missing, not ours, damaged, stale). */
function readCache(file, source) {
  const c = fs.constants;
  let fd;
  try {
    fd = fs.openSync(file, c.O_RDONLY | c.O_NOFOLLOW | c.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.uid !== process.getuid() || (st.mode & 0o7777) !== 0o600) return undefined;
    if (st.size <= HEADER + source.length || st.size > HEADER + source.length + 2 * MAX_DATA)
      return undefined;
    const buf = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = fs.readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) return undefined;
      got += n;
    }
    if (fs.readSync(fd, Buffer.allocUnsafe(1), 0, 1, got) !== 0) return undefined; // grew meanwhile
    if (buf.readUInt32BE(0) !== MAGIC || buf.readUInt32BE(4) !== source.length || buf.readUInt32BE(12) !== 0)
      return undefined;
    const length = buf.readUInt32BE(8);
    const at = HEADER + source.length;
    if (length === 0 || buf.length !== at + 2 * length) return undefined;
    if (!buf.subarray(HEADER, at).equals(source)) return undefined;
    const data = buf.subarray(at, at + length);
    return data.equals(buf.subarray(at + length)) ? data : undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function writeCache(dir, name, data, source) {
  if (data.length === 0 || data.length > MAX_DATA) return;
  const header = Buffer.alloc(HEADER);
  header.writeUInt32BE(MAGIC, 0);
  header.writeUInt32BE(source.length, 4);
  header.writeUInt32BE(data.length, 8);
  // Random enough not to collide with another run; 'wx' refuses anything already at the name.
  const tmp = `${dir}/.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  let fd;
  try {
    fd = fs.openSync(tmp, 'wx', 0o600);
  } catch {
    return;
  }
  try {
    // 0600 whatever the umask: a umask that takes the owner's write bit (0277) made the file 0400,
    // which the check above refuses, so every run wrote it again (review).
    fs.fchmodSync(fd, 0o600);
    for (const part of [header, source, data, data])
      if (fs.writeSync(fd, part) !== part.length) throw new Error('short write');
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, `${dir}/${name}`);
  } catch {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    return;
  }
  // Caches of older builds of the bundle, for this Node and exactly this command, are of no further
  // use (`law` must not match `law-firms`); a temporary file a killed run left behind (SIGKILL
  // between write and rename) goes once it is an hour old.
  const prefix = name.slice(0, name.lastIndexOf('-') + 1);
  const hourAgo = Date.now() - 3_600_000;
  for (const other of fs.readdirSync(dir)) {
    const full = `${dir}/${other}`;
    if (other !== name && other.startsWith(prefix) && /^[0-9a-f]{8}\.v8$/.test(other.slice(prefix.length)))
      fs.rmSync(full, { force: true });
    else if (other.startsWith('.tmp-')) {
      try {
        if (fs.lstatSync(full).mtimeMs < hourAgo) fs.rmSync(full, { force: true });
      } catch {}
    }
  }
}

/** Whether the run only shows help or the version: -h, --help, -V, --version, or the help command. */
function helpOrVersion(args) {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '-h' || a === '--help' || a === '-V' || a === '--version') return true;
  }
  return commandKey(args) === 'help';
}

/** Compiles the bundle with the code cache; undefined when it cannot (then a plain require). */
function compileWithCache(dir, args, file) {
  const vm = require('node:vm');
  const bytes = fs.readFileSync(file);
  const line = BUILD_LINE.exec(bytes.toString('latin1', 0, 32));
  if (!line) return undefined; // not a bundle of scripts/build.mjs: no cache
  const name = `code-${process.version}-${process.arch}-${commandKey(args)}-${line[1]}.v8`;
  // As Module.wrap, plus the bundle's import() (see scripts/build.mjs), made in this file, where
  // import() is Node's own; it resolves from bin/, in the same node_modules as dist/. Joined as
  // bytes and decoded once: a string built with `+` is a rope that V8 then copies flat, a second
  // copy of the whole bundle in the young generation (a scavenge sooner in every start). What the
  // cache keeps and is compared with is this whole source, as V8 compiles it: a changed wrapper of
  // the same length (a review) must not meet a cache made with the old one.
  const wrapped = Buffer.concat([WRAP_HEAD, bytes, WRAP_TAIL]);
  const cachedData = readCache(`${dir}/${name}`, wrapped);
  const source = wrapped.toString('utf8');
  const script = new vm.Script(source, { filename: file, cachedData });
  const remake = !cachedData || script.cachedDataRejected === true;
  return {
    script,
    save() {
      if (remake) writeCache(dir, name, script.createCachedData(), wrapped);
    },
  };
}

/** Returns the CLI module's exports, and a function to call once the command has finished. */
module.exports = function loadCli(args) {
  const lookup = LOOKUPS.has(commandKey(args));
  const file = path.join(DIST, lookup ? 'lookup.cjs' : 'cli.cjs');
  // The same test as bin/imaging.cjs for the heap tuning: those commands get no cache at all (V8
  // refuses a cache made under other flags; it would be rewritten on every run). Nor do the cache
  // commands: `imaging cache path` tells where the cache is and makes nothing there (README), and
  // the folder check below makes the compile-cache folder.
  const tuned = args.includes('export') || args.includes('--all');
  let compiled;
  if (!tuned && commandKey(args) !== 'cache') {
    try {
      const dir = privateFolder(process.env);
      if (dir) {
        // A lookup loads nothing but its bundle (compiled below) and Node's built-in modules: Node's
        // compile cache would have nothing of it to keep, and loading node:module for it costs
        // ~0.3 ms. The other commands load ES modules (conf, @inquirer/password) and the emulator.
        if (!lookup) {
          const Module = require('node:module');
          if (typeof Module.enableCompileCache === 'function') Module.enableCompileCache(dir);
        }
        compiled = compileWithCache(dir, args, file);
      }
    } catch {
      compiled = undefined;
    }
  }
  if (!compiled) return { cli: require(file), done() {} };
  const mod = { exports: {}, filename: file, id: file, loaded: false };
  const importer = (specifier) => import(specifier);
  const wrapper = compiled.script.runInThisContext();
  // The bundle's require: a built-in module from Node itself (all a lookup ever requires), anything
  // else resolved from the bundle's own folder, as require would there.
  let fromFile;
  const req = (id) =>
    id.startsWith('node:')
      ? process.getBuiltinModule(id)
      : (fromFile ??= require('node:module').createRequire(file))(id);
  wrapper.call(mod.exports, mod.exports, req, mod, file, path.dirname(file), importer);
  mod.loaded = true;
  return {
    cli: mod.exports,
    done(code) {
      // Only after a command that ran: a usage error (a typo, an id typed where a command goes)
      // must not leave a cache file named after the word. Nor after help or the version
      // (`cpt --help`, `cpt -V`): a cache is never remade while V8 accepts it, and one made by a run
      // that compiled only the help would be every later lookup's (170 million instructions
      // against 161 with a whole run's, in review).
      if (code !== 0 || helpOrVersion(args)) return;
      try {
        compiled.save();
      } catch {}
    },
  };
};
module.exports.LOOKUPS = LOOKUPS;
module.exports.COMMANDS = COMMANDS;
module.exports.WRAP = { head: WRAP_HEAD, tail: WRAP_TAIL };
