import { spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript
import { functionsCalled, RUNS } from '../../scripts/eager.mjs';
import { BIN, mockFixture, ROOT, spawnCli, tempDir } from '../helpers.js';

// What start-up loads, seen from inside the real binary: a preloaded probe lists, at exit, the
// built-in modules Node loaded and the files required. Each module named here is one a lookup does
// not need (docs/speed.md; `npm run bench` gives the timings).
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
  return {
    ...(JSON.parse(readFileSync(report, 'utf8')) as { builtins: string[]; files: string[] }),
    stdout: r.stdout,
  };
}

describe('start-up loads only what the command needs', () => {
  it('a lookup from a script (stdin and stderr /dev/null, stdout a pipe) loads node:http, but not undici, crypto, tls or tty', async () => {
    // /dev/null is a character device, as a terminal is: only a command that writes to stderr or
    // reads stdin asks node:tty whether they are terminals (a pipe is never one).
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
    expect(builtins).toContain('http');
    // import('node:http') would build an ES module facade whose getters load Node's undici.
    expect(builtins.filter((m) => m.includes('undici'))).toEqual([]);
    expect(builtins).not.toContain('crypto');
    expect(builtins).not.toContain('tls');
    // Asked only when needed (a signal's exit code, a terminal's width, a retry's wait).
    expect(builtins).not.toContain('os');
    expect(builtins).not.toContain('tty');
    expect(builtins).not.toContain('timers/promises');
  });

  it('a lookup with the reference cache, a miss then a hit: the hit sends nothing and loads no node:http', async () => {
    const cache = join(dir.path, 'private-cache');
    mkdirSync(cache, { mode: 0o700 });
    fx.reset();
    await loaded(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(readdirSync(join(cache, 'reference')).filter((f) => /^[0-9a-f]{64}\.json$/.test(f))).toHaveLength(
      1,
    );
    const hit = await loaded(['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: cache });
    expect(fx.apiRequests()).toHaveLength(1); // the second answered from the cache
    expect(hit.builtins).not.toContain('http');
  });

  it('--version reads the version file and not the CLI bundle', async () => {
    const { files, builtins, stdout } = await loaded(['--version']);
    expect(stdout).toMatch(/^\d+\.\d+\.\d+ \(source, Node v[\d.]+, [a-z]+-[a-z0-9]+\)$/);
    expect(files.some((f) => f.endsWith('version.cjs'))).toBe(true);
    expect(files.some((f) => /cli\.cjs$/.test(f))).toBe(false);
    expect(builtins).not.toContain('http');
  });
});

describe("a lookup's functions are compiled with the bundle, so Node's compile cache keeps them", () => {
  it('in the runs the build makes, V8 compiles lazily only what cannot be marked: class members, async arrows, what they hold', async () => {
    const bundle = join(ROOT, 'dist', 'cli.cjs');
    // The build's first lookup (`cpt --no-cache`): the others add the reference cache's functions.
    const lazy = (await functionsCalled(bundle, BIN, RUNS.slice(0, 1))) as { start: number; end: number }[];
    const text = readFileSync(bundle, 'utf8');
    const source = ts.createSourceFile(bundle, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
    // Node 24's V8 compiles a parenthesised arrow with the code around it; Node 22's only `(function`.
    const arrows = Number(process.versions.v8.split('.')[0]) >= 13;
    const markable = new Map<number, boolean>();
    const visit = (node: ts.Node, inMember: boolean) => {
      const member = ts.isClassElement(node) || inMember;
      if (ts.isFunctionLike(node) && !markable.has(node.end)) {
        const async =
          (ts.canHaveModifiers(node) &&
            ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword)) ??
          false;
        const topDeclaration =
          ts.isFunctionDeclaration(node) &&
          (ts.isSourceFile(node.parent) || ts.isFunctionLike(node.parent.parent));
        const expression =
          (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && arrows && !async && !member;
        markable.set(node.end, topDeclaration || expression);
      }
      ts.forEachChild(node, (child) => visit(child, member));
    };
    visit(source, false);
    expect(lazy.length).toBeGreaterThan(10);
    expect(lazy.filter((f) => markable.get(f.end)).map((f) => text.slice(f.start, f.start + 80))).toEqual([]);
  });
});

/** Node 22+ (which has module.enableCompileCache): this one, else a pinned one already installed. */
function node22plus(): string | undefined {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const pinned = process.env.IMAGING_NODE_CACHE || join(homedir(), '.cache', 'imaging-ci');
  const found = existsSync(pinned)
    ? readdirSync(pinned)
        .filter((d) => /^pinned-node-(2[2-9]|[3-9]\d)\./.test(d))
        .map((d) => join(pinned, d, 'bin', 'node'))
        .filter((exe) => existsSync(exe))
    : [];
  return found.at(-1);
}
const NODE22 = node22plus();
if (!NODE22)
  console.warn(
    'SKIPPED: the compile-cache tests need Node 22+; `node scripts/nodes.mjs` installs the pinned Nodes, then run `npx vitest run test/guarantees/startup.test.ts`.',
  );

// A code cache is executable: whoever can write it runs code as the user. Node's compile cache is
// used only in a folder no other user can write to or swap (src/cache/folder.ts), never in
// os.tmpdir(), which anyone can create first.
// Concurrently: each test has folders of its own and waits mostly on the processes it starts.
describe.concurrent("code caches: only Node's, only in a private folder", () => {
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

  it('writes nothing without a home folder, nor near a relative cache folder, nor in TMPDIR', async () => {
    const root = join(dir.path, 'nothing-written');
    // TMPDIR as /tmp is, open to all (sticky): on Node 22+ nothing is made in
    // os.tmpdir()/node-compile-cache either, where anyone could plant entries.
    mkdirSync(join(root, 'tmp'), { recursive: true });
    chmodSync(join(root, 'tmp'), 0o1777);
    mkdirSync(join(root, 'cwd'), { recursive: true, mode: 0o700 });
    const envs = [
      { HOME: join(root, 'home'), TMPDIR: join(root, 'tmp') }, // HOME missing: never created
      { HOME: join(root, 'home'), TMPDIR: join(root, 'tmp'), XDG_CACHE_HOME: 'xdg' }, // relative: ignored
      { HOME: join(root, 'home'), TMPDIR: join(root, 'tmp'), IMAGING_CACHE_DIR: 'cache' }, // relative
    ];
    // This Node and a pinned 22+ (one Node when this one is 22+ itself).
    const exes = [...new Set([process.execPath, NODE22])].filter((e): e is string => e !== undefined);
    // All at once: what any of them wrote is seen below. `--version` answers before the launcher
    // reads any of these variables: one run of it per Node, a lookup per Node and environment.
    const runs = exes.flatMap((exe) => [
      spawn(exe, ['--version'], envs[2]!, join(root, 'cwd')),
      ...envs.map((env) => spawn(exe, ['cpt', '73721', '--json'], env, join(root, 'cwd'))),
    ]);
    for (const r of await Promise.all(runs)) {
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
    }
    expect(tree(root)).toEqual(['cwd', 'tmp']);
  });

  it.skipIf(!NODE22)(
    'Node 22+: the cache folder is made 0700, used, a damaged entry is remade, and a heap-tuned command leaves it as it was',
    async () => {
      const exe = NODE22!;
      const base = join(dir.path, 'private');
      mkdirSync(base, { mode: 0o700 });
      const cache = join(base, 'cache');
      const env = { IMAGING_CACHE_DIR: cache, TMPDIR: base, IMAGING_CONFIG_DIR: join(base, 'config') };
      // A command that writes config: the bundle and conf (ES modules) both go through the cache.
      const args = ['config', 'set', 'base-url', 'http://127.0.0.1:4010', '--env', 'local'];
      const first = await spawn(exe, args, env);
      expect(first.exitCode).toBe(0);
      expect(statSync(join(cache, 'compile-cache')).mode & 0o7777).toBe(0o700);
      const entries = tree(join(cache, 'compile-cache'))
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
      // The heap-tuned commands change V8's flags as they start: a cache they rewrote would be
      // refused by every other command.
      const folder = join(cache, 'compile-cache');
      const before = tree(folder).map((f) => [f, statSync(join(folder, f)).mtimeMs]);
      expect((await spawn(exe, ['referrals', 'list', '--all', '--json'], env)).exitCode).toBe(0);
      expect(tree(folder).map((f) => [f, statSync(join(folder, f)).mtimeMs])).toEqual(before);
    },
  );

  it.skipIf(!NODE22)('Node 22+: a folder another user can write to, own or swap is not used', async () => {
    const exe = NODE22!;
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
      join(sticky, 'link', 'cache'), // through another user's symlink
      join(attacker, 'cache'), // under another user's folder
      join(open, 'cache'), // under a folder anyone can write to
      join(sticky, 'theirs'), // in /tmp-like, but not ours
      mine,
      viaLink,
    ];
    // Each folder through the launcher's own check (the file it requires, in this process); the real
    // binary then for the first one: a lookup that runs, and writes no cache there.
    const { privateFolder } = createRequire(import.meta.url)(join(ROOT, 'dist', 'cache-folder.cjs')) as {
      privateFolder: (
        env: NodeJS.ProcessEnv,
        make: boolean,
        kind: string,
      ) => { dir?: string; problem?: string };
    };
    for (const cacheDir of refused) {
      const folder = privateFolder({ IMAGING_CACHE_DIR: cacheDir }, true, 'compile-cache');
      expect([cacheDir, folder.dir]).toEqual([cacheDir, undefined]);
      expect(folder.problem).toBeTruthy();
    }
    const r = await spawn(exe, ['cpt', '73721', '--json'], { IMAGING_CACHE_DIR: refused[0], TMPDIR: tmp });
    expect(r.exitCode).toBe(0);
    const written = tree(root).filter((f) => /v\d+\.\d+\.\d+-/.test(f));
    expect(written).toEqual([]);
    // Nor did the checks make a folder for it anywhere (the two there were made above).
    expect(tree(root).filter((f) => f.endsWith('compile-cache'))).toEqual([
      'mine/compile-cache',
      'via-link/compile-cache',
    ]);
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

describe('the built binary and the package', () => {
  const fx = mockFixture();

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  describe('the built binary', () => {
    // Its version: "the package" below runs it; a lookup: the lookup from a script, above.

    it('shows one clear error and no stack trace', async () => {
      const r = await spawnCli(['modalities'], { env: fx.env({ IMAGING_TOKEN: 'mock-expired' }) });
      expect(r.exitCode).toBe(3);
      expect(r.stderr).toMatch(/^error: Sandbox API token has expired\n/);
      expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/);
    });

    it('stops quietly when the reader of its output goes away', async () => {
      const piped = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, 'icd10', '--all', '--format', 'ndjson'], {
          env: { ...fx.env(), PATH: process.env.PATH },
        });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        child.stdout.once('data', () => child.stdout.destroy());
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect(piped.stderr).not.toContain('EPIPE');
      expect(piped.code).toBe(0);
    });

    it('runs the emulator, prints its URL on stdout, and stops on SIGINT with 130', async () => {
      const child = spawn(process.execPath, [BIN, 'mock', '--port', '0'], {
        env: { PATH: process.env.PATH },
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const url = await new Promise<string>((resolve) =>
        child.stdout.once('data', (d) => resolve(String(d).trim())),
      );
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${url}/api/v2/modalities`, {
        headers: { authorization: 'Bearer mock-token' },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      const code = await new Promise<number | null>((resolve) => {
        child.on('close', (c) => resolve(c));
        child.kill('SIGINT');
      });
      expect(code).toBe(130);
      expect(stderr).toContain('emulator listening on');
    });
  });

  describe('the package', () => {
    it('declares an imaging binary that exists and runs', () => {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        bin: Record<string, string>;
      };
      const bin = join(ROOT, pkg.bin.imaging!);
      expect(statSync(bin).mode & 0o111).not.toBe(0);
      // The file every test here runs: its --version run (above) answers with the version line.
      expect(bin).toBe(BIN);
    });
  });
});
